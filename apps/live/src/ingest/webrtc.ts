import type { Writable } from 'node:stream';
import type { Logger } from 'pino';
import {
  RTCPeerConnection,
  RtcpPayloadSpecificFeedback,
  useFIR,
  useH264,
  useNACK,
  useOPUS,
  usePLI,
  useREMB,
  useVP8,
  type MediaStreamTrack,
  type RTCRtpCodecParameters,
  type RTCRtpTransceiver,
} from 'werift';
import {
  DepacketizeCallback,
  JitterBufferCallback,
  RtpSourceCallback,
  WebmCallback,
} from 'werift/nonstandard';
import { sendCloseNotify } from './close-notify.ts';
import { RtpElapsedCallback } from './rtp-elapsed.ts';
import { PublishError, type Ingest, type IngestProtocol, type IngestSink } from './ingest.ts';

/** Where publishers' media may arrive: LIVE_ICE_PORT_RANGE and LIVE_ICE_ADDRESSES. */
export interface IceSettings {
  portRange?: [number, number];
  additionalHostAddresses: string[];
}

export interface WebRtcTimings {
  /**
   * Keyframe requests (PLI, and FIR where the publisher offered it): at the first video packet,
   * again at most this often while video arrives without a keyframe, then every pliSteadyMs
   * for recovery.
   */
  pliStartMs: number;
  pliSteadyMs: number;
  iceGatheringTimeoutMs: number;
}

type MediaKind = 'audio' | 'video';

/** The ICE and bundle settings of every peer connection of ours (publishers and viewers). */
export function peerTransport(ice: IceSettings) {
  return {
    // werift leaves loopback out of its host candidates; local peers (tests, OBS on the same
    // machine) need it. Behind NAT the host's public address is announced as well.
    iceAdditionalHostAddresses: ['127.0.0.1', ...ice.additionalHostAddresses],
    ...(ice.portRange ? { icePortRange: ice.portRange } : {}),
    // No STUN: werift's default asks Google's server (a DNS lookup and a binding request per
    // connection, up to 5 s of gathering where either goes unanswered); the host's public address
    // comes from LIVE_ICE_ADDRESSES instead. Needs the werift patch, which drops its own fallback.
    iceServers: [],
    bundlePolicy: 'max-bundle' as const,
  };
}

/** Resolves once the peer connection gathered its candidates, or after `timeoutMs` regardless. */
function iceGathered(pc: RTCPeerConnection, timeoutMs: number): Promise<void> {
  if (pc.iceGatheringState === 'complete') return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, timeoutMs);
    pc.iceGatheringStateChange.subscribe((state) => {
      if (state === 'complete') {
        clearTimeout(timer);
        resolve();
      }
    });
  });
}

/** The video codecs the ladder takes from WebRTC publishers. */
export type VideoCodec = 'h264' | 'vp8';

/**
 * What WebRTC viewers are forwarded (viewers/): the publisher's tracks with the codecs it sends
 * them in, and a way to ask it for a keyframe now.
 */
export interface PublishedMedia {
  video: { track: MediaStreamTrack; codec: RTCRtpCodecParameters };
  /**
   * The ladder's WebRTC rungs below `video`, largest first, on its RTP clock, and their codec:
   * an RTMP or SRT publisher's lower ones, or the baseline renditions below a WebRTC publisher's
   * own stream (H.264 below its VP8 too). A viewer whose link loses packets moves down them.
   */
  lowerRungs?: { codec: RTCRtpCodecParameters; tracks: MediaStreamTrack[] };
  audio: { track: MediaStreamTrack; codec: RTCRtpCodecParameters } | undefined;
  requestKeyframe(): void;
}

/** A trickled ICE candidate (Sora signaling's `candidate` message), as werift takes it. */
export interface Candidate {
  candidate: string;
  sdpMid?: string;
  sdpMLineIndex?: number;
}

/** A server offer for Sora signaling, with the mids of its sections as Sora's offer names them. */
export interface SoraOffer {
  sdp: string;
  mid: { video: string; audio?: string };
}

/** The m-sections of the publisher's offer or answer that it sends on. */
function sendingMedia(sdp: string): MediaKind[] {
  const sections = sdp.split(/\r?\n(?=m=)/).slice(1);
  const kinds: MediaKind[] = [];
  for (const section of sections) {
    const kind = /^m=(\w+) (\d+)/.exec(section);
    if (!kind || kind[2] === '0') continue;
    if (kind[1] !== 'audio' && kind[1] !== 'video')
      throw new PublishError(400, `unsupported m-section ${kind[1]}`);
    if (/^a=(recvonly|inactive)\s*$/m.test(section)) continue;
    kinds.push(kind[1]);
  }
  return kinds;
}

const ICE_UFRAG = /^a=ice-ufrag:.*$/m;
const ICE_PWD = /^a=ice-pwd:.*$/m;

/**
 * RFC 8843: the m-sections of a BUNDLE group share one transport, and its ICE credentials are
 * those of the group's first (tagged) m-section. aiortc gives every m-section credentials of its
 * own; werift applies each section's in turn to the one shared ICE agent, restarting it on each
 * change and keeping the last, so every check and consent request it sends would carry the
 * wrong ones. The other bundled sections get the tagged section's credentials.
 */
function bundledCredentials(offer: string): string {
  const [session = '', ...sections] = offer.split(/(?=^m=)/m);
  const mids = /^a=group:BUNDLE[ \t]+(.*)$/m.exec(session)?.[1]?.trim().split(/\s+/) ?? [];
  const midOf = (section: string) => /^a=mid:(\S+)/m.exec(section)?.[1] ?? '';
  const tagged = sections.find((section) => midOf(section) === mids[0]);
  const ufrag = tagged && ICE_UFRAG.exec(tagged)?.[0];
  const pwd = tagged && ICE_PWD.exec(tagged)?.[0];
  // Credentials at session level only are shared by every section already.
  if (!ufrag || !pwd) return offer;
  const shared = (section: string) =>
    mids.includes(midOf(section))
      ? section.replace(ICE_UFRAG, () => ufrag).replace(ICE_PWD, () => pwd)
      : section;
  return session + sections.map(shared).join('');
}

type WebmVideoCodec = 'VP8' | 'MPEG4/ISO/AVC';
const WEBM_CODECS: Record<string, WebmVideoCodec> = { vp8: 'VP8', h264: 'MPEG4/ISO/AVC' };

/** The video payload types of an SDP answer whose codec the ladder takes (H.264, VP8). */
export function webmCodecsByPayloadType(answer: string): Map<number, WebmVideoCodec> {
  const section = answer.split(/\r?\n(?=m=)/).find((part) => part.startsWith('m=video '));
  const codecs = new Map<number, WebmVideoCodec>();
  for (const [, payloadType, name] of (section ?? '').matchAll(/^a=rtpmap:(\d+) ([^/\s]+)/gm)) {
    const codec = WEBM_CODECS[name!.toLowerCase()];
    if (codec) codecs.set(Number(payloadType), codec);
  }
  return codecs;
}

/**
 * RFC 5104 FIR (payload-specific feedback, FMT 4) for one SSRC. werift does not export its own,
 * whose length field is one word short.
 */
class FirFeedback {
  readonly count = 4;
  readonly length = 4; // 32-bit words after the RTCP header's first: sender, media, one FCI entry
  constructor(
    private readonly senderSsrc: number,
    private readonly ssrc: number,
    private readonly sequence: number,
  ) {}

  serialize(): Buffer {
    const packet = Buffer.alloc(16);
    packet.writeUInt32BE(this.senderSsrc, 0);
    packet.writeUInt32BE(0, 4); // media source: unused by FIR
    packet.writeUInt32BE(this.ssrc, 8);
    packet[12] = this.sequence & 0xff;
    return packet;
  }
}

/**
 * werift marks an H.264 frame as a keyframe only when one of its RTP packets is itself an IDR
 * slice (single NAL or FU-A): a keyframe small enough for one STAP-A (SPS, PPS and the IDR
 * slice aggregated, as encoders send small pictures) goes unmarked, and the WebM writer would
 * drop it with everything up to the next one. The depacketized frame is Annex B: its NAL
 * units' own types tell.
 */
export function withIdrMarked<T extends { frame?: { data: Buffer; isKeyframe: boolean } }>(input: T): T {
  const frame = input.frame;
  if (!frame || frame.isKeyframe) return input;
  const data = frame.data;
  for (let i = 0; i + 3 < data.length; i++) {
    if (data[i] === 0 && data[i + 1] === 0 && data[i + 2] === 1 && (data[i + 3]! & 0x1f) === 5) {
      return { ...input, frame: { ...frame, isKeyframe: true } };
    }
  }
  return input;
}

/** What we accept for video: werift's defaults plus FIR, answered only when the offer has it. */
const VIDEO_FEEDBACK = () => ({ rtcpFeedback: [useNACK(), usePLI(), useREMB(), useFIR()] });

/**
 * ffmpeg reads the WebM this ingest writes. It starts at the publisher's first keyframe, audio
 * and video together (see start()), so probing ends as soon as that keyframe is decoded:
 * -fpsprobesize 0 skips the frame rate guess that otherwise reads 40 frames (WebM's millisecond
 * time base doubles ffmpeg's 20), 2.7 s at 15 fps. No +nobuffer: it discards the packets read
 * while probing, that first keyframe among them, and the decoder then waits for the publisher's
 * next one (9 s with aiortc, its picture duplicated back to time 0). -analyzeduration 0 would
 * mean ffmpeg's default of 5 s, not none.
 */
const WEBM_INPUT = [
  '-fflags',
  '+genpts',
  '-fpsprobesize',
  '0',
  '-analyzeduration',
  '1000000',
  '-probesize',
  '1000000',
  '-f',
  'webm',
  '-i',
  'pipe:0',
];

/**
 * A WebRTC publisher (WHIP: it offers; Sora signaling: we offer): a werift peer connection receiving H.264 or VP8
 * and Opus, its RTP turned into a WebM stream (jitter buffer, depacketizer) for ffmpeg's stdin.
 * A pipe rather than RTP over UDP to ffmpeg: nothing is lost or reordered between the two, and
 * ffmpeg needs no ports or SDP file.
 */
export class WebRtcIngest implements Ingest {
  readonly ffmpegInput = WEBM_INPUT;
  withAudio = false;
  private pc: RTCPeerConnection | undefined;
  private readonly tracks: MediaStreamTrack[] = [];
  private video: MediaStreamTrack | undefined;
  /** The answer's video payload types of codecs the ladder takes. */
  private videoCodecs = new Map<number, WebmVideoCodec>();
  private audio: MediaStreamTrack | undefined;
  private sink: IngestSink | undefined;
  private sources: RtpSourceCallback[] = [];
  private webm: WebmCallback | undefined;
  private keyframeTimer: NodeJS.Timeout | undefined;
  private keyframeSeen = false;
  private announceMedia!: (media: PublishedMedia) => void;
  /** Settles with the publisher's first video packet of a codec the ladder takes. */
  readonly media = new Promise<PublishedMedia>((resolve) => (this.announceMedia = resolve));
  private announceLadderStart!: (timestamp: number) => void;
  /**
   * Settles with the RTP timestamp of the publisher's first keyframe: time 0 of the WebM the
   * ladder's ffmpeg reads, so of every rendition it encodes (rtp-source.ts places them by it).
   */
  readonly ladderStart = new Promise<number>((resolve) => (this.announceLadderStart = resolve));
  private closed = false;
  private markClosed!: () => void;
  /** Settles once the ingest is closed: the session ended, for whatever reason. */
  readonly ended = new Promise<void>((resolve) => (this.markClosed = resolve));

  constructor(
    readonly protocol: IngestProtocol,
    private readonly ice: IceSettings,
    private readonly timings: WebRtcTimings,
    private readonly log: Logger,
  ) {}

  /** WHIP: takes the publisher's SDP offer and answers it, every ICE candidate included. */
  async answer(offer: string): Promise<string> {
    this.sentMedia('offer', offer);
    const pc = this.createPeer('h264');
    await this.describe('offer', async () => {
      await pc.setRemoteDescription({ type: 'offer', sdp: bundledCredentials(offer) });
      for (const transceiver of pc.getTransceivers()) transceiver.setDirection('recvonly');
      await pc.setLocalDescription(await pc.createAnswer());
    });
    this.takeTracks(pc.localDescription!.sdp);
    await iceGathered(pc, this.timings.iceGatheringTimeoutMs);
    return pc.localDescription!.sdp;
  }

  /**
   * Sora signaling: the server offers to receive video (the codec asked for first) and, unless
   * the client sends none, audio; every ICE candidate of ours is in the offer.
   */
  async offer(options: { audio: boolean; videoCodec: VideoCodec }): Promise<SoraOffer> {
    const pc = this.createPeer(options.videoCodec);
    const video = pc.addTransceiver('video', { direction: 'recvonly' });
    const audio = options.audio ? pc.addTransceiver('audio', { direction: 'recvonly' }) : undefined;
    await pc.setLocalDescription(await pc.createOffer());
    await iceGathered(pc, this.timings.iceGatheringTimeoutMs);
    return {
      sdp: pc.localDescription!.sdp,
      mid: { video: video.mid ?? '', ...(audio ? { audio: audio.mid ?? '' } : {}) },
    };
  }

  /** Sora signaling: the client's answer to offer(). */
  async accept(answer: string): Promise<void> {
    const pc = this.pc;
    if (!pc) throw new Error('accept() before offer()');
    this.sentMedia('answer', answer);
    await this.describe('answer', () => pc.setRemoteDescription({ type: 'answer', sdp: answer }));
    this.takeTracks(answer);
  }

  /** A trickled candidate of the publisher (Sora signaling's `candidate` message). */
  async addCandidate(candidate: Candidate): Promise<void> {
    await this.pc?.addIceCandidate(candidate).catch(() => {
      // An unusable candidate costs the publisher that path only; ICE goes on with the others.
    });
  }

  /** What the publisher's description says it sends: one video, at most one audio. */
  private sentMedia(what: 'offer' | 'answer', sdp: string): void {
    const kinds = sendingMedia(sdp);
    const videos = kinds.filter((kind) => kind === 'video').length;
    const audios = kinds.filter((kind) => kind === 'audio').length;
    if (videos !== 1 || audios > 1) {
      throw new PublishError(400, `the ${what} must send one video track and at most one audio track`);
    }
    this.withAudio = audios === 1;
  }

  private createPeer(firstVideoCodec: VideoCodec): RTCPeerConnection {
    const video = { h264: useH264(VIDEO_FEEDBACK()), vp8: useVP8(VIDEO_FEEDBACK()) };
    const pc = new RTCPeerConnection({
      codecs: {
        video: firstVideoCodec === 'vp8' ? [video.vp8, video.h264] : [video.h264, video.vp8],
        audio: [useOPUS()],
      },
      ...peerTransport(this.ice),
    });
    this.pc = pc;
    pc.onTrack.subscribe((track) => void this.tracks.push(track));
    pc.connectionStateChange.subscribe((state) => {
      if (state === 'failed' || state === 'closed') this.sink?.ended(`connection ${state}`);
    });
    return pc;
  }

  /** Runs werift's description steps: its refusal of the SDP is the publisher's mistake, not ours. */
  private async describe(what: 'offer' | 'answer', steps: () => Promise<unknown>): Promise<void> {
    try {
      await steps();
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new PublishError(400, `unusable SDP ${what}: ${reason}`);
    }
  }

  /** The tracks the answer agreed on: H.264 or VP8 video, Opus audio when sent. */
  private takeTracks(answer: string): void {
    this.video = this.tracks.find((track) => track.kind === 'video');
    this.audio = this.tracks.find((track) => track.kind === 'audio');
    this.videoCodecs = webmCodecsByPayloadType(answer);
    if (!this.video || this.videoCodecs.size === 0) {
      throw new PublishError(400, 'the publisher sends no H.264 or VP8 video');
    }
    if (this.withAudio && (!this.audio || this.audio.codec?.name.toLowerCase() !== 'opus')) {
      throw new PublishError(400, 'the publisher sends no Opus audio');
    }
  }

  start(stdin: Writable, sink: IngestSink): void {
    const { pc, video } = this;
    if (!pc || !video) throw new Error('start() before answer()');
    this.sink = sink;
    const audio = this.withAudio ? this.audio : undefined;
    const keyframes = this.keyframeRequests(pc, video);
    const videoSource = new RtpSourceCallback();
    let codec: WebmVideoCodec | undefined;
    video.onReceiveRtp.subscribe((rtp) => {
      sink.received(rtp.payload.length + rtp.header.serializeSize);
      // Until the first keyframe every packet may ask again (rate-limited): no slow timer.
      if (!this.keyframeSeen) keyframes.ask();
      // An answer may agree on several codecs, and the publisher sends the one its encoder has
      // (Chromium without an H.264 encoder sends VP8 under an answer listing H.264 first): the
      // first packet's payload type chooses; packets of another codec later are dropped.
      const sent = this.videoCodecs.get(rtp.header.payloadType);
      if (!sent || (codec && sent !== codec)) return;
      if (!codec) {
        codec = sent;
        this.package(codec, audio, videoSource, stdin, sink);
        this.announce(pc, video, rtp.header.payloadType, audio, keyframes.now);
      }
      videoSource.input(rtp.clone());
    });
    this.sources.push(videoSource);
  }

  private announce(
    pc: RTCPeerConnection,
    video: MediaStreamTrack,
    payloadType: number,
    audio: MediaStreamTrack | undefined,
    requestKeyframe: () => void,
  ): void {
    const negotiated = (track: MediaStreamTrack) =>
      pc.getTransceivers().find((t) => t.receiver.track === track)?.codecs ?? [];
    const videoCodec = negotiated(video).find((c) => c.payloadType === payloadType);
    const audioCodec = audio && (audio.codec ?? negotiated(audio)[0]);
    if (!videoCodec) return;
    this.announceMedia({
      video: { track: video, codec: videoCodec },
      audio: audio && audioCodec ? { track: audio, codec: audioCodec } : undefined,
      requestKeyframe,
    });
  }

  /**
   * RTP to WebM: video through a jitter buffer and the depacketizer, Opus beside it, both into
   * the WebM writer whose output is ffmpeg's input.
   */
  private package(
    codec: WebmVideoCodec,
    audio: MediaStreamTrack | undefined,
    videoSource: RtpSourceCallback,
    stdin: Writable,
    sink: IngestSink,
  ): void {
    const webm = new WebmCallback(
      [
        { kind: 'video', codec, clockRate: 90000, trackNumber: 1 },
        ...(audio
          ? [{ kind: 'audio' as const, codec: 'OPUS' as const, clockRate: 48000, trackNumber: 2 }]
          : []),
      ],
      { duration: 24 * 3_600_000 },
    );
    this.webm = webm;
    webm.pipe(async (output) => {
      if (output.saveToFile && !stdin.destroyed) stdin.write(output.saveToFile);
    });
    const jitter = new JitterBufferCallback(90000, { latency: 100 });
    const videoTime = new RtpElapsedCallback(90000);
    const videoDepacketizer = new DepacketizeCallback(codec, {
      isFinalPacketInSequence: (header) => header.marker,
    });
    videoSource.pipe(jitter.input);
    jitter.pipe(videoTime.input);
    videoTime.pipe(videoDepacketizer.input);
    // ffmpeg's input starts at the first keyframe, audio and video together: nothing for its
    // probing to wait on or guess from, and no audio-only prefix (the WebM writer drops video
    // before its first keyframe but not audio).
    videoDepacketizer.pipe((depacketized) => {
      const input = codec === 'MPEG4/ISO/AVC' ? withIdrMarked(depacketized) : depacketized;
      if (input.frame?.isKeyframe && !this.keyframeSeen) {
        this.keyframeSeen = true;
        // The WebM writer times every track from its first frame: this one.
        this.announceLadderStart(videoTime.timestampAt(input.frame.time));
        sink.keyframe();
      }
      webm.inputVideo(input);
    });
    if (!audio) return;
    const audioSource = new RtpSourceCallback();
    audio.onReceiveRtp.subscribe((rtp) => {
      sink.received(rtp.payload.length + rtp.header.serializeSize);
      audioSource.input(rtp.clone());
    });
    const audioTime = new RtpElapsedCallback(48000);
    const audioDepacketizer = new DepacketizeCallback('OPUS');
    audioSource.pipe(audioTime.input);
    audioTime.pipe(audioDepacketizer.input);
    audioDepacketizer.pipe((input) => {
      if (!input.frame || this.keyframeSeen) webm.inputAudio(input);
    });
    this.sources.push(audioSource);
  }

  /**
   * Keyframe requests: the transcode starts at the publisher's first keyframe, so one is asked
   * for with the first video packet and again (at most every pliStartMs) while video keeps
   * arriving without one; after it, every pliSteadyMs for recovery. PLI always, FIR as well
   * when the publisher's offer has `ccm fir` (some encoders answer only that). `now` asks at
   * once (a viewer joined or lost a picture; the viewers' side limits its rate).
   */
  private keyframeRequests(pc: RTCPeerConnection, video: MediaStreamTrack): { ask(): void; now(): void } {
    const transceiver = pc.getTransceivers().find((t: RTCRtpTransceiver) => t.receiver.track === video);
    const fir = video.codec?.rtcpFeedback.some((f) => f.type === 'ccm' && f.parameter === 'fir') ?? false;
    let last = 0;
    let firSequence = 0;
    const now = () => {
      if (video.ssrc === undefined || !transceiver || this.closed) return;
      last = Date.now();
      const receiver = transceiver.receiver;
      receiver.sendRtcpPLI(video.ssrc).catch(() => {});
      if (fir) {
        const request = new RtcpPayloadSpecificFeedback({
          // werift's feedback type is a union of its own classes; FIR is serialized as one.
          feedback: new FirFeedback(receiver.rtcpSsrc, video.ssrc, firSequence++) as never,
        });
        receiver.dtlsTransport?.sendRtcp([request]).catch(() => {});
      }
    };
    const ask = () => {
      const interval = this.keyframeSeen ? this.timings.pliSteadyMs : this.timings.pliStartMs;
      if (Date.now() - last >= interval) now();
    };
    this.keyframeTimer = setInterval(ask, this.timings.pliSteadyMs);
    return { ask, now };
  }

  /** The publisher left (its signaling says so): the session ends, this ingest with it. */
  leave(reason: string): void {
    if (this.sink) this.sink.ended(reason);
    else void this.close();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.markClosed();
    clearInterval(this.keyframeTimer);
    for (const source of this.sources) source.destroy();
    this.webm?.destroy();
    if (this.pc) {
      // The publisher learns of the end at once, not when its consent checks expire.
      await sendCloseNotify(this.pc).catch((error: unknown) =>
        this.log.warn({ err: error }, 'could not send the DTLS close alert'),
      );
      await this.pc.close().catch(() => {});
    }
  }
}
