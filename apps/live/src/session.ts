import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Rendition } from '@ukiyo/contract';
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
  type RTCRtpTransceiver,
} from 'werift';
import {
  DepacketizeCallback,
  JitterBufferCallback,
  RtpSourceCallback,
  RtpTimeCallback,
  WebmCallback,
} from 'werift/nonstandard';
import { ArchiveQueue, type Destination } from './archive.ts';
import { sendCloseNotify } from './close-notify.ts';
import { decorateMediaPlaylist, ffmpegArgs, masterPlaylist, playlistSegments } from './hls/ladder.ts';
import type { LiveMetrics } from './metrics.ts';
import type { LiveUsage } from './usage.ts';
import type { Webhooks } from './webhooks.ts';

/** A refusal of a WHIP offer, answered with this status. */
export class WhipError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export interface SessionTimings {
  /** How often new segments are looked for (archive, first-playlist notice). */
  watchMs: number;
  /**
   * Keyframe requests (PLI, and FIR where the publisher offered it): at the first video packet,
   * again at most this often while video arrives without a keyframe, then every pliSteadyMs
   * for recovery.
   */
  pliStartMs: number;
  pliSteadyMs: number;
  /** No media for this long (or ICE disconnected this long) ends the session. */
  mediaTimeoutMs: number;
  iceGatheringTimeoutMs: number;
}

/** Wall clocks of a session's start (ms): how long it took to go on air. */
export interface OnAirTimes {
  /** The WHIP offer arrived. */
  offerAt: number;
  firstPacketAt?: number;
  /** The first keyframe came out of the depacketizer and went to ffmpeg with everything after it. */
  firstKeyframeAt?: number;
  /** Every rendition's playlist lists a segment: the master playlist is written. */
  firstSegmentAt?: number;
}

export interface SessionOptions {
  channelId: string;
  organizationId: number;
  connectionId: string;
  renditions: Rendition[];
  /** The session's own directory: `hls/` is served, `private/` holds the key file. */
  dir: string;
  /** AES-128 segments: the key (16 bytes) and the URI written in EXT-X-KEY. */
  encryption?: { key: Buffer; uri: string };
  /** Renditions archived, by index. */
  destinations: Map<number, Destination>;
  eventWebhookUrl: string;
  webhooks: Webhooks;
  usage: LiveUsage;
  metrics: LiveMetrics;
  log: Logger;
  timings: SessionTimings;
  ice: IceSettings;
  archiveRetry: { attempts: number; backoffMs: number };
  /** The master playlist exists (its first segment is written). */
  onPlaylist(): void;
  onEnd(): Promise<void>;
}

/** Where publishers' media may arrive: LIVE_ICE_PORT_RANGE and LIVE_ICE_ADDRESSES. */
export interface IceSettings {
  portRange?: [number, number];
  additionalHostAddresses: string[];
}

type MediaKind = 'audio' | 'video';

/** The m-sections of an offer the publisher sends on. */
function offeredMedia(sdp: string): MediaKind[] {
  const sections = sdp.split(/\r?\n(?=m=)/).slice(1);
  const kinds: MediaKind[] = [];
  for (const section of sections) {
    const kind = /^m=(\w+) (\d+)/.exec(section);
    if (!kind || kind[2] === '0') continue;
    if (kind[1] !== 'audio' && kind[1] !== 'video')
      throw new WhipError(400, `unsupported m-section ${kind[1]}`);
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

const WEBM_CODECS: Record<string, 'VP8' | 'MPEG4/ISO/AVC'> = { vp8: 'VP8', h264: 'MPEG4/ISO/AVC' };

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

/** What we accept for video: werift's defaults plus FIR, answered only when the offer has it. */
const VIDEO_FEEDBACK = () => ({ rtcpFeedback: [useNACK(), usePLI(), useREMB(), useFIR()] });

/**
 * One WHIP publisher: a werift peer connection receiving H.264 or VP8 and Opus, its RTP turned
 * into a WebM stream (jitter buffer, depacketizer) piped into one ffmpeg that encodes the HLS
 * ladder. A pipe rather than RTP over UDP to ffmpeg: nothing is lost or reordered between the
 * two, and ffmpeg needs no ports or SDP file.
 */
export class PublishSession {
  readonly startedAt = Date.now();
  readonly onAir: OnAirTimes = { offerAt: this.startedAt };
  private pc: RTCPeerConnection | undefined;
  private ffmpeg: ChildProcessWithoutNullStreams | undefined;
  private ffmpegExited: Promise<void> = Promise.resolve();
  private sources: RtpSourceCallback[] = [];
  private webm: WebmCallback | undefined;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly archive: ArchiveQueue;
  private readonly seen: Set<string>[];
  private readonly playlistTimes: number[];
  private withAudio = false;
  private playlistReady = false;
  private lastMediaAt = Date.now();
  private ending: Promise<void> | undefined;
  private stderr = '';

  constructor(private readonly options: SessionOptions) {
    this.archive = new ArchiveQueue(
      options.channelId,
      options.eventWebhookUrl,
      options.webhooks,
      options.log,
      options.archiveRetry,
    );
    this.seen = options.renditions.map(() => new Set());
    this.playlistTimes = options.renditions.map(() => 0);
  }

  get hlsDir(): string {
    return join(this.options.dir, 'hls');
  }

  get live(): boolean {
    return this.playlistReady && !this.ending;
  }

  /** Takes the SDP offer and answers it (ICE candidates included: WHIP without trickle). */
  async negotiate(offer: string): Promise<string> {
    const kinds = offeredMedia(offer);
    const videos = kinds.filter((kind) => kind === 'video').length;
    const audios = kinds.filter((kind) => kind === 'audio').length;
    if (videos !== 1 || audios > 1) {
      throw new WhipError(400, 'the offer must send one video track and at most one audio track');
    }
    this.withAudio = audios === 1;
    const pc = new RTCPeerConnection({
      codecs: { video: [useH264(VIDEO_FEEDBACK()), useVP8(VIDEO_FEEDBACK())], audio: [useOPUS()] },
      // werift leaves loopback out of its host candidates; local publishers (tests, OBS on the
      // same machine) need it. Behind NAT the host's public address is announced as well.
      iceAdditionalHostAddresses: ['127.0.0.1', ...this.options.ice.additionalHostAddresses],
      ...(this.options.ice.portRange ? { icePortRange: this.options.ice.portRange } : {}),
      bundlePolicy: 'max-bundle',
    });
    this.pc = pc;
    const tracks: MediaStreamTrack[] = [];
    pc.onTrack.subscribe((track) => void tracks.push(track));
    pc.connectionStateChange.subscribe((state) => {
      if (state === 'failed' || state === 'closed') void this.stop(`connection ${state}`);
    });
    try {
      await pc.setRemoteDescription({ type: 'offer', sdp: bundledCredentials(offer) });
      for (const transceiver of pc.getTransceivers()) transceiver.setDirection('recvonly');
      await pc.setLocalDescription(await pc.createAnswer());
    } catch (error) {
      // werift's parser refusing the offer is the publisher's mistake, not ours.
      throw new WhipError(
        400,
        `unusable SDP offer: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    const video = tracks.find((track) => track.kind === 'video');
    const audio = tracks.find((track) => track.kind === 'audio');
    const videoCodec = video?.codec?.name.toLowerCase() ?? '';
    if (!video || !WEBM_CODECS[videoCodec]) throw new WhipError(400, 'the offer has no H.264 or VP8 video');
    if (this.withAudio && audio?.codec?.name.toLowerCase() !== 'opus') {
      throw new WhipError(400, 'the offer has no Opus audio');
    }
    await this.gathered(pc);
    const keyframes = this.keyframeRequests(pc, video);
    await this.startPackaging(video, videoCodec, this.withAudio ? audio : undefined, keyframes);
    return pc.localDescription!.sdp;
  }

  private gathered(pc: RTCPeerConnection): Promise<void> {
    if (pc.iceGatheringState === 'complete') return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, this.options.timings.iceGatheringTimeoutMs);
      pc.iceGatheringStateChange.subscribe((state) => {
        if (state === 'complete') {
          clearTimeout(timer);
          resolve();
        }
      });
    });
  }

  private async startPackaging(
    video: MediaStreamTrack,
    videoCodec: string,
    audio: MediaStreamTrack | undefined,
    keyframes: { ask(): void },
  ): Promise<void> {
    const { renditions, encryption } = this.options;
    await rm(this.options.dir, { recursive: true, force: true });
    await Promise.all(renditions.map((_, i) => mkdir(join(this.hlsDir, String(i)), { recursive: true })));
    let keyInfoFile: string | undefined;
    if (encryption) {
      const privateDir = join(this.options.dir, 'private');
      await mkdir(privateDir, { recursive: true, mode: 0o700 });
      const keyFile = join(privateDir, 'segment.key');
      keyInfoFile = join(privateDir, 'key-info');
      await writeFile(keyFile, encryption.key, { mode: 0o600 });
      // No IV line: with periodic_rekey (ladder.ts) ffmpeg takes each segment's media sequence
      // number as its IV and writes it in the segment's EXT-X-KEY.
      await writeFile(keyInfoFile, `${encryption.uri}\n${keyFile}\n`, { mode: 0o600 });
    }
    const ffmpeg = spawn(
      'ffmpeg',
      ffmpegArgs({ renditions, dir: this.hlsDir, withAudio: audio !== undefined, keyInfoFile }),
      { stdio: ['pipe', 'ignore', 'pipe'] },
    ) as unknown as ChildProcessWithoutNullStreams;
    this.ffmpeg = ffmpeg;
    ffmpeg.stderr.setEncoding('utf8');
    ffmpeg.stderr.on('data', (chunk: string) => {
      this.stderr = (this.stderr + chunk).slice(-4000);
    });
    // A publisher leaving mid-write is normal; ffmpeg's exit is handled below.
    ffmpeg.stdin.on('error', () => {});
    this.ffmpegExited = new Promise((resolve) => {
      // ffmpeg missing, or no process or file left to start it: this session ends, not the process.
      ffmpeg.on('error', (error) => {
        this.options.log.error({ err: error }, 'ffmpeg could not run');
        resolve();
        if (!this.ending) void this.stop('ffmpeg could not run');
      });
      ffmpeg.on('close', (code) => {
        if (!this.ending) {
          this.options.log.warn({ code, stderr: this.stderr }, 'ffmpeg exited during the session');
          void this.stop('ffmpeg exited');
        }
        resolve();
      });
    });

    const webm = new WebmCallback(
      [
        { kind: 'video', codec: WEBM_CODECS[videoCodec]!, clockRate: 90000, trackNumber: 1 },
        ...(audio
          ? [{ kind: 'audio' as const, codec: 'OPUS' as const, clockRate: 48000, trackNumber: 2 }]
          : []),
      ],
      { duration: 24 * 3_600_000 },
    );
    this.webm = webm;
    webm.pipe(async (output) => {
      if (output.saveToFile && !ffmpeg.stdin.destroyed) ffmpeg.stdin.write(output.saveToFile);
    });
    const count = (rtpBytes: number) => {
      this.lastMediaAt = Date.now();
      this.options.usage.bytesIn(this.options.channelId, this.options.organizationId, rtpBytes);
      this.options.metrics.ingestBytes.inc(rtpBytes);
    };
    const videoSource = new RtpSourceCallback();
    video.onReceiveRtp.subscribe((rtp) => {
      count(rtp.payload.length + rtp.header.serializeSize);
      this.onAir.firstPacketAt ??= Date.now();
      // Until the first keyframe every packet may ask again (rate-limited): no slow timer.
      if (this.onAir.firstKeyframeAt === undefined) keyframes.ask();
      videoSource.input(rtp.clone());
    });
    const jitter = new JitterBufferCallback(90000, { latency: 100 });
    const videoTime = new RtpTimeCallback(90000);
    const videoDepacketizer = new DepacketizeCallback(WEBM_CODECS[videoCodec]!, {
      isFinalPacketInSequence: (header) => header.marker,
    });
    videoSource.pipe(jitter.input);
    jitter.pipe(videoTime.input);
    videoTime.pipe(videoDepacketizer.input);
    // ffmpeg's input starts at the first keyframe, audio and video together: nothing for its
    // probing to wait on or guess from, and no audio-only prefix (the WebM writer drops video
    // before its first keyframe but not audio).
    videoDepacketizer.pipe((input) => {
      if (input.frame?.isKeyframe && this.onAir.firstKeyframeAt === undefined) {
        this.onAir.firstKeyframeAt = Date.now();
      }
      webm.inputVideo(input);
    });
    this.sources.push(videoSource);
    if (audio) {
      const audioSource = new RtpSourceCallback();
      audio.onReceiveRtp.subscribe((rtp) => {
        count(rtp.payload.length + rtp.header.serializeSize);
        audioSource.input(rtp.clone());
      });
      const audioTime = new RtpTimeCallback(48000);
      const audioDepacketizer = new DepacketizeCallback('OPUS');
      audioSource.pipe(audioTime.input);
      audioTime.pipe(audioDepacketizer.input);
      audioDepacketizer.pipe((input) => {
        if (!input.frame || this.onAir.firstKeyframeAt !== undefined) webm.inputAudio(input);
      });
      this.sources.push(audioSource);
    }
    this.every(this.options.timings.watchMs, () => this.watch());
    this.every(1000, () => {
      if (Date.now() - this.lastMediaAt > this.options.timings.mediaTimeoutMs) void this.stop('no media');
    });
  }

  /**
   * Keyframe requests: the transcode starts at the publisher's first keyframe, so one is asked
   * for with the first video packet and again (at most every pliStartMs) while video keeps
   * arriving without one; after it, every pliSteadyMs for recovery. PLI always, FIR as well
   * when the publisher's offer has `ccm fir` (some encoders answer only that).
   */
  private keyframeRequests(pc: RTCPeerConnection, video: MediaStreamTrack): { ask(): void } {
    const transceiver = pc.getTransceivers().find((t: RTCRtpTransceiver) => t.receiver.track === video);
    const fir = video.codec?.rtcpFeedback.some((f) => f.type === 'ccm' && f.parameter === 'fir') ?? false;
    let last = 0;
    let firSequence = 0;
    const ask = () => {
      const interval =
        this.onAir.firstKeyframeAt === undefined
          ? this.options.timings.pliStartMs
          : this.options.timings.pliSteadyMs;
      if (Date.now() - last < interval || video.ssrc === undefined || !transceiver || this.ending) return;
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
    this.every(this.options.timings.pliSteadyMs, ask);
    return { ask };
  }

  private every(ms: number, run: () => void | Promise<void>): void {
    let busy = false;
    const timer = setInterval(() => {
      if (busy) return;
      busy = true;
      Promise.resolve(run())
        .catch((error: unknown) => this.options.log.warn({ err: error }, 'live session task failed'))
        .finally(() => (busy = false));
    }, ms);
    this.timers.add(timer);
  }

  /** New segments in each media playlist: the first one publishes the master, each is archived. */
  private async watch(): Promise<void> {
    for (const [index, rendition] of this.options.renditions.entries()) {
      const playlistPath = join(this.hlsDir, String(index), 'index.m3u8');
      const info = await stat(playlistPath).catch(() => undefined);
      if (!info || info.mtimeMs === this.playlistTimes[index]) continue;
      this.playlistTimes[index] = info.mtimeMs;
      const playlist = await readFile(playlistPath, 'utf8').catch(() => '');
      const fresh = playlistSegments(playlist).filter((name) => !this.seen[index]!.has(name));
      if (fresh.length === 0) continue;
      const destination = this.options.destinations.get(index);
      for (const name of fresh) {
        this.seen[index]!.add(name);
        if (!destination) continue;
        // Read now: ffmpeg deletes segments that fell out of the playlist a little later.
        const body = await readFile(join(this.hlsDir, String(index), name)).catch(() => undefined);
        if (body)
          this.archive.add(destination, { path: this.archivePath(index, name), body, fileType: 'ts' });
      }
      if (destination) {
        this.archive.add(destination, {
          path: this.archivePath(index, 'index.m3u8'),
          body: Buffer.from(decorateMediaPlaylist(playlist, rendition)),
          fileType: 'm3u8',
        });
      }
    }
    if (!this.playlistReady && !this.ending && this.seen.every((segments) => segments.size > 0)) {
      await writeFile(
        join(this.hlsDir, 'master.m3u8'),
        masterPlaylist(this.options.renditions, this.withAudio),
      );
      this.playlistReady = true;
      this.onAir.firstSegmentAt = Date.now();
      const { offerAt, firstPacketAt, firstKeyframeAt, firstSegmentAt } = this.onAir;
      this.options.log.info(
        {
          offerToSegmentMs: firstSegmentAt - offerAt,
          keyframeToSegmentMs: firstKeyframeAt === undefined ? null : firstSegmentAt - firstKeyframeAt,
          packetToKeyframeMs:
            firstKeyframeAt === undefined || firstPacketAt === undefined
              ? null
              : firstKeyframeAt - firstPacketAt,
        },
        'publisher on air',
      );
      this.options.onPlaylist();
    }
  }

  private archivePath(index: number, name: string): string {
    return `${this.options.channelId}/${this.options.connectionId}/${index}/${name}`;
  }

  /**
   * Ends the session once: the peer connection closes, ffmpeg finishes its playlists (ENDLIST)
   * on end of input or is killed, the last segments are archived and the key file removed.
   */
  stop(reason: string): Promise<void> {
    this.ending ??= this.end(reason);
    return this.ending;
  }

  private async end(reason: string): Promise<void> {
    this.options.log.info({ channelId: this.options.channelId, reason }, 'publisher session ended');
    for (const timer of this.timers) clearInterval(timer);
    this.timers.clear();
    for (const source of this.sources) source.destroy();
    this.webm?.destroy();
    if (this.pc) {
      // The publisher learns of the end at once, not when its consent checks expire.
      await sendCloseNotify(this.pc).catch((error: unknown) =>
        this.options.log.warn({ err: error }, 'could not send the DTLS close alert'),
      );
      await this.pc.close().catch(() => {});
    }
    const ffmpeg = this.ffmpeg;
    if (ffmpeg && ffmpeg.exitCode === null && ffmpeg.signalCode === null) {
      ffmpeg.stdin.end();
      const kill = setTimeout(() => ffmpeg.kill('SIGKILL'), 3000);
      await this.ffmpegExited;
      clearTimeout(kill);
    }
    await this.watch().catch(() => {});
    await this.archive.drain();
    await rm(join(this.options.dir, 'private'), { recursive: true, force: true });
    await this.options.onEnd();
  }
}
