import { randomBytes } from 'node:crypto';
import nodeDataChannel, { type PeerConnection } from 'node-datachannel';
import { RtpPacket, type RTCRtpCodecParameters } from 'werift';
import { PublishError } from '../ingest/ingest.ts';
import type { Candidate, IceSettings, SoraOffer } from '../ingest/webrtc.ts';
import { h264KeyframeStart, sendTo, TrackFanout, vp8KeyframeStart } from './fanout.ts';
import { OutgoingTrack } from './rtp-out.ts';

/** A codec of the publisher's, as a viewer process is told it (structured-cloneable). */
export interface CodecDescription {
  mimeType: string;
  clockRate: number;
  channels?: number;
  parameters?: string;
  payloadType?: number;
}

/** What a viewer process is told of a publisher's media, to forward it to viewers. */
export interface BroadcastDescription {
  id: string;
  /** The publisher's connection id, the viewers' stream (Sora's SDK files tracks by it). */
  streamId: string;
  video: CodecDescription;
  /** How many video streams: the ladder's WebRTC rungs, or a WebRTC publisher's own and those below it. */
  rungs: number;
  /**
   * The codec of the rungs below the first when it is not the first's: the ladder's H.264 below
   * a VP8 publisher's own stream, which a viewer receiving both switches to (another payload type
   * in the same m-section).
   */
  lowerCodec?: CodecDescription;
  audio: CodecDescription | undefined;
}

export function describeCodec(codec: RTCRtpCodecParameters): CodecDescription {
  return {
    mimeType: codec.mimeType,
    clockRate: codec.clockRate,
    ...(codec.channels ? { channels: codec.channels } : {}),
    ...(codec.parameters ? { parameters: codec.parameters } : {}),
    ...(codec.payloadType !== undefined ? { payloadType: codec.payloadType } : {}),
  };
}

const codecName = (codec: Pick<CodecDescription, 'mimeType'>) => codec.mimeType.split('/')[1] ?? '';

/**
 * A publisher's media in a viewer process: a fanout per track (per rung for the ladder's video),
 * fed with the publisher's RTP packets as the live process passes them on (processes.ts), its
 * viewers' keyframe requests passed back by `requestKeyframe`. The live process sends the video of
 * the rungs that have viewers here only: `onRungs` is told which, as that changes.
 */
export class ForwardedMedia {
  readonly video: TrackFanout[];
  readonly audio: TrackFanout | undefined;

  constructor(
    readonly description: BroadcastDescription,
    requestKeyframe: () => void,
    onRungs: (rungs: number[]) => void,
  ) {
    const keyframeStart = (codec: CodecDescription) =>
      codecName(codec).toLowerCase() === 'vp8' ? vp8KeyframeStart : h264KeyframeStart;
    const watchedRungs = () => onRungs(this.video.flatMap((fanout, rung) => (fanout.watched ? [rung] : [])));
    const { video, lowerCodec = video } = description;
    this.video = Array.from(
      { length: description.rungs },
      (_, rung) =>
        new TrackFanout(
          video.clockRate,
          keyframeStart(rung > 0 ? lowerCodec : video),
          requestKeyframe,
          watchedRungs,
        ),
    );
    if (description.audio)
      this.audio = new TrackFanout(description.audio.clockRate, undefined, requestKeyframe);
  }

  /** One RTP packet of the publisher's `kind` track (video: of rung `rung`), as serialised. */
  forward(kind: 'video' | 'audio', rung: number, bytes: Buffer): void {
    const fanout = kind === 'video' ? this.video[rung] : this.audio;
    fanout?.forward(RtpPacket.deSerialize(bytes), bytes);
  }
}

/** The payload types of an m-section's codec named `name` (rtpmap), with their fmtp parameters. */
function payloadTypes(section: string, name: string): { payloadType: number; fmtp: string }[] {
  const found = [];
  for (const [, payloadType, codec] of section.matchAll(/^a=rtpmap:(\d+) ([^/\s]+)/gm)) {
    if (codec!.toLowerCase() !== name.toLowerCase()) continue;
    const fmtp = new RegExp(`^a=fmtp:${payloadType} (.*)$`, 'm').exec(section)?.[1] ?? '';
    found.push({ payloadType: Number(payloadType), fmtp });
  }
  return found;
}

/**
 * The viewer's m-section of `kind` cut down to the publisher's codec, first, and its RTX, then
 * `lower` (the codec of the rungs below a VP8 publisher's stream) and its RTX when the viewer
 * offers it: a browser's offer lists H.264 several times, packetization-mode 0 among them, which
 * cannot carry fragmented NAL units. H.264 takes packetization-mode 1, the codec's profile when
 * offered.
 */
export function offerFor(
  offer: string,
  kind: 'audio' | 'video',
  codec: Pick<CodecDescription, 'mimeType' | 'parameters'>,
  lower?: Pick<CodecDescription, 'mimeType' | 'parameters'>,
): string {
  const [session = '', ...sections] = offer.split(/(?=^m=)/m);
  const cut = sections.map((section) => {
    if (!section.startsWith(`m=${kind} `)) return section;
    const first = chosenPayloadType(section, codec);
    if (first === undefined)
      throw new PublishError(406, `the offer's ${kind} cannot receive ${codecName(codec)}`);
    const second = lower && chosenPayloadType(section, lower);
    const keep = new Set(
      [first, second].flatMap((payloadType) =>
        payloadType === undefined ? [] : [payloadType, ...rtxOf(section, payloadType)],
      ),
    );
    return section
      .replace(/^(m=\S+ \S+ \S+) .*$/m, (_, head: string) => `${head} ${[...keep].join(' ')}`)
      .replace(/^a=(?:rtpmap|fmtp|rtcp-fb):(\d+) .*\r?\n/gm, (line, payloadType: string) =>
        keep.has(Number(payloadType)) ? line : '',
      );
  });
  return session + cut.join('');
}

/** The section's payload type for `codec` (H.264: packetization mode 1, its profile first), if any. */
function chosenPayloadType(
  section: string,
  codec: Pick<CodecDescription, 'mimeType' | 'parameters'>,
): number | undefined {
  const name = codecName(codec);
  const candidates = payloadTypes(section, name).filter(
    ({ fmtp }) => name.toLowerCase() !== 'h264' || /packetization-mode=1/.test(fmtp),
  );
  const profile = /profile-level-id=([0-9a-f]{4})/i.exec(codec.parameters ?? '')?.[1]?.toLowerCase();
  const chosen =
    candidates.find(({ fmtp }) => profile && fmtp.toLowerCase().includes(`profile-level-id=${profile}`)) ??
    candidates[0];
  return chosen?.payloadType;
}

/** The section's RTX payload types for `payloadType` (fmtp `apt`). */
function rtxOf(section: string, payloadType: number): number[] {
  return payloadTypes(section, 'rtx')
    .filter(({ fmtp }) => new RegExp(`(^|;)\\s*apt=${payloadType}(;|$)`).test(fmtp))
    .map((rtx) => rtx.payloadType);
}

/** Why a viewer ended: closed (either side, or its connection failed), or shed for want of room. */
export type ViewerEnd = 'closed' | 'no-room';

/** An m-section of an SDP: its kind, mid and payload types, the first the one it sends with. */
interface MediaSection {
  kind: string;
  mid: string;
  payloadTypes: number[];
  text: string;
}

function mediaSections(sdp: string): MediaSection[] {
  return sdp
    .split(/(?=^m=)/m)
    .slice(1)
    .map((text) => {
      const [, kind = '', formats = ''] = /^m=(\S+) \S+ \S+ ?(.*)$/m.exec(text) ?? [];
      return {
        kind,
        mid: /^a=mid:(\S+)/m.exec(text)?.[1] ?? '',
        payloadTypes: formats.trim().split(/\s+/).filter(Boolean).map(Number),
        text,
      };
    });
}

/** The codecs of an m-section offerFor cut, in its order, each with its RTX payload type. */
function trackCodecs(section: MediaSection): TrackCodec[] {
  const rtx = new Set(payloadTypes(section.text, 'rtx').map(({ payloadType }) => payloadType));
  return section.payloadTypes
    .filter((payloadType) => !rtx.has(payloadType))
    .map((payloadType) => ({
      name: rtpmapName(section.text, payloadType) ?? '',
      payloadType,
      fmtp: fmtpOf(section.text, payloadType),
      rtxPayloadType: rtxOf(section.text, payloadType)[0],
    }));
}

/** An m-section's codec name for `payloadType` (its rtpmap), if any. */
const rtpmapName = (section: string, payloadType: number) =>
  new RegExp(`^a=rtpmap:${payloadType} ([^/\\s]+)`, 'm').exec(section)?.[1];

/** An m-section's fmtp parameters for `payloadType`, if any. */
const fmtpOf = (section: string, payloadType: number) =>
  new RegExp(`^a=fmtp:${payloadType} (.*?)\\r?$`, 'm').exec(section)?.[1];

/** A sending track's codec: name, payload type and fmtp, and its RTX payload type when negotiated. */
interface TrackCodec {
  name: string;
  payloadType: number;
  fmtp: string | undefined;
  rtxPayloadType: number | undefined;
}

/**
 * `sdp` with a host candidate on each of `addresses` beside each IPv4 host candidate of
 * libdatachannel's (same port: its socket listens on every address). libdatachannel leaves
 * loopback out; behind NAT the host's public address is announced as well.
 */
export function withHostAddresses(sdp: string, addresses: string[]): string {
  let foundation = 100;
  return sdp.replace(
    /^a=candidate:\S+ 1 UDP (\d+) (\d+\.\d+\.\d+\.\d+) (\d+) typ host(\r?\n)/gim,
    (line, priority: string, address: string, port: string, eol: string) =>
      line +
      addresses
        .filter((extra) => extra !== address)
        .map(
          (extra) =>
            `a=candidate:${foundation++} 1 UDP ${Number(priority) - 1} ${extra} ${port} typ host${eol}`,
        )
        .join(''),
  );
}

/**
 * A WebRTC viewer: a node-datachannel peer connection (libdatachannel: ICE, DTLS and SRTP in
 * C++) sending the publisher's tracks, one sendonly track per kind, through the media's
 * fanouts, which keep the last 128 packets for NACKs and answer them, over RTX when negotiated.
 * libdatachannel protects and sends each packet within the call that hands it over, so the cost
 * of a viewer stays on the thread that forwards to it.
 */
export class WebRtcViewer {
  private pc: PeerConnection | undefined;
  /** The sending tracks: held here, or the binding lets their callbacks go with them. */
  private readonly tracks: OutgoingTrack[] = [];
  private readonly removals: (() => void)[] = [];
  /** Sora signaling: the video payload types the viewer's answer to our offer kept. */
  private answeredPayloadTypes: Set<number> | undefined;
  private closed = false;
  private markClosed!: (why: ViewerEnd) => void;
  /** Settles once the viewer is gone: its connection failed or closed, or close() was called. */
  readonly ended = new Promise<ViewerEnd>((resolve) => (this.markClosed = resolve));

  constructor(
    readonly id: string,
    private readonly media: ForwardedMedia,
    private readonly ice: IceSettings,
    private readonly iceGatheringTimeoutMs: number,
  ) {}

  private createPeer(): PeerConnection {
    const [portRangeBegin, portRangeEnd] = this.ice.portRange ?? [];
    // No STUN: the host's public address comes from LIVE_ICE_ADDRESSES instead.
    const pc = new nodeDataChannel.PeerConnection(this.id, {
      iceServers: [],
      ...(portRangeBegin !== undefined ? { portRangeBegin, portRangeEnd } : {}),
    });
    this.pc = pc;
    pc.onStateChange((state) => {
      if (state === 'failed' || state === 'closed') void this.close();
    });
    return pc;
  }

  /**
   * Adds our sending track of `kind` with mid `mid` (its description: the codecs, each with its
   * RTX, and the SSRCs in the publisher's stream), forwarded to once open. `codecs`: the
   * publisher's, then (video) the lower rungs' when they have their own and the viewer takes it.
   */
  private addTrack(pc: PeerConnection, kind: 'video' | 'audio', mid: string, codecs: TrackCodec[]): void {
    const description = this.media.description;
    const { clockRate } = kind === 'video' ? description.video : description.audio!;
    const cname = description.streamId;
    const ssrc = randomSsrc();
    const rtxSsrc = codecs.some((codec) => codec.rtxPayloadType !== undefined) ? randomSsrc() : undefined;
    const media =
      kind === 'video'
        ? new nodeDataChannel.Video(mid, 'SendOnly')
        : new nodeDataChannel.Audio(mid, 'SendOnly');
    const ids = codecs.map((codec) => {
      // The binding takes no undefined for an absent fmtp.
      const fmtp = codec.fmtp === undefined ? [] : [codec.fmtp];
      if (media instanceof nodeDataChannel.Video) media.addVideoCodec(codec.payloadType, codec.name, ...fmtp);
      else media.addOpusCodec(codec.payloadType, ...fmtp);
      if (codec.rtxPayloadType !== undefined)
        media.addRTXCodec(codec.rtxPayloadType, codec.payloadType, clockRate);
      return {
        stream: { ssrc, payloadType: codec.payloadType },
        rtx:
          codec.rtxPayloadType === undefined || rtxSsrc === undefined
            ? undefined
            : { ssrc: rtxSsrc, payloadType: codec.rtxPayloadType },
      };
    });
    media.addSSRC(ssrc, cname, description.streamId, `${kind}-${this.id}`);
    if (rtxSsrc !== undefined) {
      media.addSSRC(rtxSsrc, cname);
      media.parseSdpLine(`a=ssrc-group:FID ${ssrc} ${rtxSsrc}`);
    }
    const track = pc.addTrack(media);
    const out = new OutgoingTrack(track, cname, ids);
    this.tracks.push(out);
    // Forwarding starts once media can flow: the keyframe a viewer starts at is not lost to a
    // handshake still under way.
    track.onOpen(() => {
      if (!this.closed) this.removals.push(sendTo(out, this.rungsOf(kind, out)));
    });
  }

  /**
   * The fanouts a track of `kind` is sent: the audio, or the video's rungs, those below the first
   * when they share its codec or the viewer takes theirs too (a Sora viewer's answer may leave
   * out a codec of our offer).
   */
  private rungsOf(kind: 'video' | 'audio', out: OutgoingTrack): TrackFanout[] {
    if (kind === 'audio') return [this.media.audio!];
    const lower = out.lower?.stream.payloadType;
    const takesLower = lower !== undefined && (this.answeredPayloadTypes?.has(lower) ?? true);
    return this.media.description.lowerCodec && !takesLower ? this.media.video.slice(0, 1) : this.media.video;
  }

  /** An offer's m-section that nothing is sent on, answered inactive with its first codec. */
  private addInactive(pc: PeerConnection, section: MediaSection): void {
    const payloadType = section.payloadTypes[0];
    if (payloadType === undefined || (section.kind !== 'audio' && section.kind !== 'video')) return;
    const name = rtpmapName(section.text, payloadType) ?? 'opus';
    const media =
      section.kind === 'video'
        ? new nodeDataChannel.Video(section.mid, 'Inactive')
        : new nodeDataChannel.Audio(section.mid, 'Inactive');
    if (media instanceof nodeDataChannel.Video) media.addVideoCodec(payloadType, name);
    else media.addAudioCodec(payloadType, name);
    pc.addTrack(media);
  }

  /** WHEP: answers the viewer's offer, every candidate of ours in the answer. */
  async answer(offer: string): Promise<string> {
    const { video, audio } = this.media.description;
    let usable = offerFor(offer, 'video', video, this.media.description.lowerCodec);
    if (audio) usable = offerFor(usable, 'audio', audio);
    const sections = mediaSections(usable);
    if (!sections.some((section) => section.kind === 'video'))
      throw new PublishError(400, 'the offer has no video section');
    if (sections.length > MAX_OFFER_SECTIONS)
      throw new PublishError(400, `the offer has more than ${MAX_OFFER_SECTIONS} media sections`);
    const pc = this.createPeer();
    // The sections' mids, payload types and fmtp are the viewer's: what libdatachannel refuses of
    // them is the viewer's mistake too.
    await this.describe('offer', () => {
      for (const section of sections) {
        const kind =
          section.kind === 'video' ? 'video' : section.kind === 'audio' && audio ? 'audio' : undefined;
        if (!kind) {
          this.addInactive(pc, section);
          continue;
        }
        this.addTrack(pc, kind, section.mid, trackCodecs(section));
      }
      pc.setRemoteDescription(usable, 'offer');
    });
    return this.gathered(pc);
  }

  /** Sora signaling `recvonly`: our offer to send the publisher's video and audio. */
  async offer(): Promise<SoraOffer> {
    const pc = this.createPeer();
    const { video, lowerCodec, audio } = this.media.description;
    const videoType = video.payloadType ?? 96;
    const audioType = audio?.payloadType ?? 111;
    const taken = new Set([videoType, audioType]);
    /** The lowest dynamic payload type not yet used. */
    const free = () => {
      const payloadType = [...Array(32).keys()].map((n) => 96 + n).find((n) => !taken.has(n))!;
      taken.add(payloadType);
      return payloadType;
    };
    const videoCodecs = [
      { name: codecName(video), payloadType: videoType, fmtp: video.parameters, rtxPayloadType: free() },
      ...(lowerCodec
        ? [
            {
              name: codecName(lowerCodec),
              payloadType: free(),
              fmtp: lowerCodec.parameters,
              rtxPayloadType: free(),
            },
          ]
        : []),
    ];
    this.addTrack(pc, 'video', '0', videoCodecs);
    if (audio)
      this.addTrack(pc, 'audio', '1', [
        { name: codecName(audio), payloadType: audioType, fmtp: audio.parameters, rtxPayloadType: undefined },
      ]);
    pc.setLocalDescription('offer');
    return { sdp: await this.gathered(pc), mid: { video: '0', ...(audio ? { audio: '1' } : {}) } };
  }

  /** Sora signaling: the viewer's answer to offer(). */
  async accept(answer: string): Promise<void> {
    const pc = this.pc;
    if (!pc) throw new Error('accept() before offer()');
    await this.describe('answer', () => pc.setRemoteDescription(answer, 'answer'));
    const video = mediaSections(answer).find((section) => section.kind === 'video');
    this.answeredPayloadTypes = new Set(video?.payloadTypes);
  }

  /** A trickled candidate of the viewer (Sora signaling's `candidate` message). */
  async addCandidate(candidate: Candidate): Promise<void> {
    if (!candidate.candidate) return;
    try {
      this.pc?.addRemoteCandidate(candidate.candidate, candidate.sdpMid ?? '0');
    } catch {
      // An unusable candidate costs the viewer that path only.
    }
  }

  /** Our description once its candidates are gathered (or the gathering timed out). */
  private async gathered(pc: PeerConnection): Promise<string> {
    if (pc.gatheringState() !== 'complete') {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.iceGatheringTimeoutMs);
        pc.onGatheringStateChange((state) => {
          if (state !== 'complete') return;
          clearTimeout(timer);
          resolve();
        });
      });
    }
    const description = pc.localDescription();
    if (!description) throw new Error('no local description');
    return withHostAddresses(description.sdp, ['127.0.0.1', ...this.ice.additionalHostAddresses]);
  }

  /** libdatachannel's refusal of the viewer's SDP is the viewer's mistake, not ours. */
  private async describe(what: 'offer' | 'answer', step: () => void): Promise<void> {
    try {
      step();
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new PublishError(400, `unusable SDP ${what}: ${reason}`);
    }
  }

  async close(why: ViewerEnd = 'closed'): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const remove of this.removals) remove();
    this.markClosed(why);
    for (const track of this.tracks) track.bye();
    this.pc?.close();
  }
}

const randomSsrc = () => randomBytes(4).readUInt32BE(0);

/** A viewer's offer needs two m-sections (video, audio), perhaps a data channel's: more is no viewer's. */
const MAX_OFFER_SECTIONS = 8;
