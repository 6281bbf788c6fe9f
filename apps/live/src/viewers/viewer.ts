import {
  MediaStream,
  RTCPeerConnection,
  RTCRtpCodecParameters,
  RtpPacket,
  useFIR,
  useNACK,
  useOPUS,
  usePLI,
  type RTCRtpTransceiver,
} from 'werift';
import { sendCloseNotify } from '../ingest/close-notify.ts';
import { PublishError } from '../ingest/ingest.ts';
import {
  bundledCredentials,
  iceGathered,
  peerTransport,
  type Candidate,
  type IceSettings,
  type SoraOffer,
} from '../ingest/webrtc.ts';
import { h264KeyframeStart, TrackFanout, vp8KeyframeStart } from './fanout.ts';

/** A codec of the publisher's, as a viewer thread is told it (structured-cloneable). */
export interface CodecDescription {
  mimeType: string;
  clockRate: number;
  channels?: number;
  parameters?: string;
  payloadType?: number;
}

/** What a viewer thread is told of a publisher's media, to forward it to viewers. */
export interface BroadcastDescription {
  id: string;
  /** The publisher's connection id, the viewers' stream (Sora's SDK files tracks by it). */
  streamId: string;
  video: CodecDescription;
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
 * A publisher's media in a viewer thread: a fanout per track, fed with the publisher's RTP
 * packets as the main thread passes them on (threads.ts), its viewers' keyframe requests passed
 * back by `requestKeyframe`.
 */
export class ForwardedMedia {
  readonly video: TrackFanout;
  readonly audio: TrackFanout | undefined;

  constructor(
    readonly description: BroadcastDescription,
    requestKeyframe: () => void,
  ) {
    const keyframeStart =
      codecName(description.video).toLowerCase() === 'vp8' ? vp8KeyframeStart : h264KeyframeStart;
    this.video = new TrackFanout(keyframeStart, requestKeyframe);
    if (description.audio) this.audio = new TrackFanout(undefined, requestKeyframe);
  }

  /** One RTP packet of the publisher's `kind` track, as serialised. */
  forward(kind: 'video' | 'audio', bytes: Buffer): void {
    const fanout = kind === 'video' ? this.video : this.audio;
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
 * The viewer's m-section of `kind` cut down to the publisher's codec (and its RTX): werift
 * answers with every payload type of a matching name and sends with the first, and a browser's
 * offer lists H.264 several times, packetization-mode 0 among them, which cannot carry the
 * publisher's fragmented NAL units. H.264 takes packetization-mode 1, the publisher's profile
 * when offered.
 */
export function offerFor(
  offer: string,
  kind: 'audio' | 'video',
  codec: Pick<CodecDescription, 'mimeType' | 'parameters'>,
): string {
  const name = codecName(codec);
  const [session = '', ...sections] = offer.split(/(?=^m=)/m);
  const cut = sections.map((section) => {
    if (!section.startsWith(`m=${kind} `)) return section;
    const candidates = payloadTypes(section, name).filter(
      ({ fmtp }) => name.toLowerCase() !== 'h264' || /packetization-mode=1/.test(fmtp),
    );
    const profile = /profile-level-id=([0-9a-f]{4})/i.exec(codec.parameters ?? '')?.[1]?.toLowerCase();
    const chosen =
      candidates.find(({ fmtp }) => profile && fmtp.toLowerCase().includes(`profile-level-id=${profile}`)) ??
      candidates[0];
    if (!chosen) throw new PublishError(406, `the offer's ${kind} cannot receive ${name}`);
    const keep = new Set([
      chosen.payloadType,
      ...payloadTypes(section, 'rtx')
        .filter(({ fmtp }) => fmtp.includes(`apt=${chosen.payloadType}`))
        .map(({ payloadType }) => payloadType),
    ]);
    return section
      .replace(/^(m=\S+ \S+ \S+) .*$/m, (_, head: string) => `${head} ${[...keep].join(' ')}`)
      .replace(/^a=(?:rtpmap|fmtp|rtcp-fb):(\d+) .*\r?\n/gm, (line, payloadType: string) =>
        keep.has(Number(payloadType)) ? line : '',
      );
  });
  return session + cut.join('');
}

/** Why a viewer ended: closed (either side, or its connection failed), or shed for want of room. */
export type ViewerEnd = 'closed' | 'no-room';

/**
 * A WebRTC viewer, in a viewer thread: a werift peer connection sending the publisher's tracks
 * (one sendonly transceiver per kind) through the media's fanouts, which send below werift's sender
 * (rtp-out.ts) with its SSRC and payload type, keep the last 128 packets for NACKs and answer
 * them, over RTX when negotiated.
 */
export class WebRtcViewer {
  private pc: RTCPeerConnection | undefined;
  private readonly removals: (() => void)[] = [];
  private closed = false;
  private markClosed!: (why: ViewerEnd) => void;
  /** Settles once the viewer is gone: its connection failed or closed, or close() was called. */
  readonly ended = new Promise<ViewerEnd>((resolve) => (this.markClosed = resolve));

  constructor(
    readonly id: string,
    private readonly media: ForwardedMedia,
    private readonly ice: IceSettings,
    private readonly iceGatheringTimeoutMs: number,
    private readonly warn: (message: string, error: unknown) => void,
  ) {}

  private createPeer(): RTCPeerConnection {
    const { video, audio } = this.media.description;
    const forwarded = (codec: CodecDescription, rtcpFeedback: RTCRtpCodecParameters['rtcpFeedback']) =>
      new RTCRtpCodecParameters({
        mimeType: codec.mimeType,
        clockRate: codec.clockRate,
        ...(codec.channels ? { channels: codec.channels } : {}),
        ...(codec.parameters ? { parameters: codec.parameters } : {}),
        rtcpFeedback,
      });
    const pc = new RTCPeerConnection({
      codecs: {
        video: [
          forwarded(video, [useNACK(), usePLI(), useFIR()]),
          new RTCRtpCodecParameters({ mimeType: 'video/rtx', clockRate: video.clockRate }),
        ],
        // Without the publisher's audio, Opus still: werift fails to negotiate an offer's audio
        // section without a codec, and answer() makes that section inactive.
        audio: [audio ? forwarded(audio, []) : useOPUS()],
      },
      ...peerTransport(this.ice),
    });
    this.pc = pc;
    pc.connectionStateChange.subscribe((state) => {
      // Forwarding starts once media can flow: the keyframe a viewer starts at is not lost to
      // a handshake still under way.
      if (state === 'connected') this.forward(pc.getTransceivers());
      if (state === 'failed' || state === 'closed') void this.close();
    });
    return pc;
  }

  /** Each sending transceiver into its track's fanout (video waits there for a keyframe). */
  private forward(transceivers: RTCRtpTransceiver[]): void {
    if (this.removals.length > 0 || this.closed) return;
    for (const transceiver of transceivers) {
      const fanout = transceiver.kind === 'video' ? this.media.video : this.media.audio;
      if (fanout && transceiver.direction === 'sendonly') this.removals.push(fanout.add(transceiver.sender));
    }
  }

  /** The viewer's tracks belong to the publisher's stream, named by its connection id. */
  private get stream(): MediaStream {
    return new MediaStream({ id: this.media.description.streamId });
  }

  /** WHEP: answers the viewer's offer, every candidate of ours in the answer. */
  async answer(offer: string): Promise<string> {
    const { video, audio } = this.media.description;
    let usable = offerFor(bundledCredentials(offer), 'video', video);
    if (audio) usable = offerFor(usable, 'audio', audio);
    const pc = this.createPeer();
    await this.describe('offer', () => pc.setRemoteDescription({ type: 'offer', sdp: usable }));
    const stream = this.stream;
    for (const transceiver of pc.getTransceivers()) {
      const sending = transceiver.kind === 'video' || this.media.audio !== undefined;
      transceiver.setDirection(sending ? 'sendonly' : 'inactive');
      transceiver.sender.setStreams([stream]);
    }
    await pc.setLocalDescription(await pc.createAnswer());
    await iceGathered(pc, this.iceGatheringTimeoutMs);
    return pc.localDescription!.sdp;
  }

  /** Sora signaling `recvonly`: our offer to send the publisher's video and audio. */
  async offer(): Promise<SoraOffer> {
    const pc = this.createPeer();
    const streams = [this.stream];
    const video = pc.addTransceiver('video', { direction: 'sendonly', streams });
    const audio = this.media.audio
      ? pc.addTransceiver('audio', { direction: 'sendonly', streams })
      : undefined;
    await pc.setLocalDescription(await pc.createOffer());
    await iceGathered(pc, this.iceGatheringTimeoutMs);
    return {
      sdp: pc.localDescription!.sdp,
      mid: { video: video.mid ?? '', ...(audio ? { audio: audio.mid ?? '' } : {}) },
    };
  }

  /** Sora signaling: the viewer's answer to offer(). */
  async accept(answer: string): Promise<void> {
    const pc = this.pc;
    if (!pc) throw new Error('accept() before offer()');
    await this.describe('answer', () => pc.setRemoteDescription({ type: 'answer', sdp: answer }));
  }

  /** A trickled candidate of the viewer (Sora signaling's `candidate` message). */
  async addCandidate(candidate: Candidate): Promise<void> {
    await this.pc?.addIceCandidate(candidate).catch(() => {
      // An unusable candidate costs the viewer that path only.
    });
  }

  /** werift's refusal of the viewer's SDP is the viewer's mistake, not ours. */
  private async describe(what: 'offer' | 'answer', step: () => Promise<unknown>): Promise<void> {
    try {
      await step();
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
    if (this.pc) {
      await sendCloseNotify(this.pc).catch((error: unknown) =>
        this.warn('could not send the DTLS close alert to a viewer', error),
      );
      await this.pc.close().catch(() => {});
    }
  }
}
