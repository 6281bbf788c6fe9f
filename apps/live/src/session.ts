import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import type { Readable } from 'node:stream';
import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Rendition } from '@ukiyo/contract';
import type { Logger } from 'pino';
import type { Archive, ArchiveSession, Destination } from './archive.ts';
import {
  decorateMediaPlaylist,
  ffmpegArgs,
  type LadderInput,
  mapsAudio,
  masterPlaylist,
  partTarget,
  playlistSegments,
  STREAMS_PLAYLIST,
} from './hls/ladder.ts';
import { LowLatencyRendition } from './hls/ll-hls.ts';
import type { Ingest } from './ingest/ingest.ts';
import { MediaWatch } from './media-watch.ts';
import type { LiveMetrics } from './metrics.ts';
import type { LiveUsage } from './usage.ts';

export interface SessionTimings {
  /** How often new segments are looked for (archive, first-playlist notice). */
  watchMs: number;
  /** No media for this long ends the session. */
  mediaTimeoutMs: number;
}

/** Wall clocks of a session's start (ms): how long it took to go on air. */
export interface OnAirTimes {
  /** The publisher's offer or connection arrived. */
  offerAt: number;
  firstPacketAt?: number;
  /** The first keyframe went to ffmpeg with everything after it. */
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
  /** RTP of one rendition for WebRTC viewers (publishers that send no RTP themselves). */
  rtp?: LadderInput['rtp'];
  eventWebhookUrl: string;
  archive: Archive;
  usage: LiveUsage;
  metrics: LiveMetrics;
  log: Logger;
  timings: SessionTimings;
  /** The master playlist exists (its first segment is written). */
  onPlaylist(): void;
  onEnd(): Promise<void>;
}

/** How often a session asks whether its publisher has gone quiet (timings.mediaTimeoutMs). */
const MEDIA_CHECK_MS = 1_000;
/** Complete segments an LL-HLS rendition keeps in memory, and the bytes they may hold. */
const LOW_LATENCY_WINDOW = { windowSegments: 6, windowBytes: 48 * 1024 * 1024 };

/**
 * One publisher's HLS: an ffmpeg reading the ingest's media (ingest/) and encoding the channel's
 * ladder, the playlists watched for new segments (the first one puts the channel on air, each
 * is archived), and the end: ingest closed, ffmpeg finishing its playlists, files removed.
 * Unencrypted channels also get Low-Latency HLS, packaged in memory from ffmpeg's fMP4 pipes.
 */
export class PublishSession {
  readonly startedAt = Date.now();
  readonly onAir: OnAirTimes = { offerAt: this.startedAt };
  private ingest: Ingest | undefined;
  private ffmpeg: ChildProcessWithoutNullStreams | undefined;
  private ffmpegExited: Promise<void> = Promise.resolve();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly archived: ArchiveSession;
  private readonly seen: Set<string>[];
  private readonly playlistTimes: number[];
  private playlistReady = false;
  private readonly media: MediaWatch;
  private ending: Promise<void> | undefined;
  private stderr = '';
  /** Per rendition; undefined for encrypted channels (MPEG-TS segments only: see ladder.ts). */
  readonly lowLatency: LowLatencyRendition[] | undefined;

  constructor(private readonly options: SessionOptions) {
    this.media = new MediaWatch(options.timings.mediaTimeoutMs, MEDIA_CHECK_MS, this.startedAt);
    this.archived = {
      organizationId: options.organizationId,
      channelId: options.channelId,
      connectionId: options.connectionId,
      eventWebhookUrl: options.eventWebhookUrl,
    };
    this.seen = options.renditions.map(() => new Set());
    this.playlistTimes = options.renditions.map(() => 0);
    this.lowLatency = options.encryption
      ? undefined
      : options.renditions.map(
          (rendition) =>
            new LowLatencyRendition({
              targetDuration: rendition.durationSeconds,
              partTarget: partTarget(rendition),
              ...(rendition.startTimeOffset === undefined
                ? {}
                : { startTimeOffset: rendition.startTimeOffset }),
              ...LOW_LATENCY_WINDOW,
            }),
        );
  }

  get hlsDir(): string {
    return join(this.options.dir, 'hls');
  }

  get live(): boolean {
    return this.playlistReady && !this.ending;
  }

  /** Starts ffmpeg on the ingest's media (the publisher is connected or about to be). */
  async start(ingest: Ingest): Promise<void> {
    this.ingest = ingest;
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
      ffmpegArgs({
        input: ingest.ffmpegInput,
        renditions,
        dir: this.hlsDir,
        withAudio: ingest.withAudio,
        keyInfoFile,
        lowLatency: this.lowLatency !== undefined,
        ...(this.options.rtp ? { rtp: this.options.rtp } : {}),
      }),
      {
        // Descriptors 3 and up: each rendition's fMP4 (ffmpegArgs names them pipe:3...).
        stdio: ['pipe', 'ignore', 'pipe', ...(this.lowLatency ?? []).map(() => 'pipe' as const)],
        // A session (so a process group) of its own: a stop signal sent to the live process's
        // whole group (Ctrl-C, systemd) is the live process's to act on. It drains its viewers,
        // then ends each session by closing ffmpeg's input. Its input and outputs being pipes to
        // this process, ffmpeg ends with it all the same (architecture.md: what a session of its
        // own means for scheduling).
        detached: true,
      },
    ) as unknown as ChildProcessWithoutNullStreams;
    this.ffmpeg = ffmpeg;
    for (const [index, packager] of (this.lowLatency ?? []).entries()) {
      const fragments = ffmpeg.stdio[3 + index] as Readable;
      fragments.on('data', (chunk: Buffer) => {
        try {
          packager.push(chunk);
        } catch (error) {
          this.options.log.error(
            { err: error, rendition: index },
            'ffmpeg wrote fMP4 that cannot be packaged',
          );
          if (!this.ending) void this.stop('LL-HLS packaging failed');
        }
      });
      fragments.on('end', () => packager.end());
    }
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
    ingest.start(ffmpeg.stdin, {
      received: (bytes) => {
        const now = Date.now();
        this.media.received(now);
        this.onAir.firstPacketAt ??= now;
        this.options.usage.bytesIn(this.options.channelId, this.options.organizationId, bytes);
        this.options.metrics.ingestBytes.inc(bytes);
      },
      keyframe: () => {
        this.onAir.firstKeyframeAt ??= Date.now();
      },
      ended: (reason) => void this.stop(reason),
    });
    this.every(this.options.timings.watchMs, () => this.watch());
    this.every(MEDIA_CHECK_MS, () => {
      if (this.media.quiet(Date.now())) void this.stop('no media');
    });
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
          await this.options.archive.add(this.archived, destination, {
            path: this.archivePath(index, name),
            body,
            fileType: 'ts',
          });
      }
      if (destination) {
        await this.options.archive.add(this.archived, destination, {
          path: this.archivePath(index, 'index.m3u8'),
          body: Buffer.from(decorateMediaPlaylist(playlist, rendition)),
          fileType: 'm3u8',
        });
      }
    }
    if (!this.playlistReady && !this.ending && this.seen.every((segments) => segments.size > 0)) {
      const withAudio = this.ingest?.withAudio ?? (await this.ffmpegMapsAudio());
      if (withAudio === undefined) return;
      await writeFile(join(this.hlsDir, 'master.m3u8'), masterPlaylist(this.options.renditions, withAudio));
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

  /** Whether ffmpeg mapped audio, from its own master playlist; undefined until it is written. */
  private async ffmpegMapsAudio(): Promise<boolean | undefined> {
    const playlist = await readFile(join(this.hlsDir, '0', STREAMS_PLAYLIST), 'utf8').catch(() => '');
    return mapsAudio(playlist);
  }

  private archivePath(index: number, name: string): string {
    return `${this.options.channelId}/${this.options.connectionId}/${index}/${name}`;
  }

  /**
   * Ends the session once: the publisher is disconnected, ffmpeg finishes its playlists (ENDLIST)
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
    await this.ingest?.close();
    const ffmpeg = this.ffmpeg;
    if (ffmpeg && ffmpeg.exitCode === null && ffmpeg.signalCode === null) {
      ffmpeg.stdin.end();
      const kill = setTimeout(() => ffmpeg.kill('SIGKILL'), 3000);
      await this.ffmpegExited;
      clearTimeout(kill);
    }
    for (const packager of this.lowLatency ?? []) packager.end();
    await this.watch().catch(() => {});
    await rm(join(this.options.dir, 'private'), { recursive: true, force: true });
    await this.options.onEnd();
  }
}
