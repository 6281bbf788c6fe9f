import { fork, type ChildProcess, type ForkOptions } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import type { Socket } from 'node:net';
import { availableParallelism } from 'node:os';
import type { Writable } from 'node:stream';
import { MessageChannel } from 'node:worker_threads';
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import type { Config } from '@ukiyo/server';
import type { Logger } from 'pino';
import type { MediaStreamTrack, RtpPacket } from 'werift';
import { PublishError } from '../ingest/ingest.ts';
import type { Candidate, PublishedMedia, SoraOffer } from '../ingest/webrtc.ts';
import type { LowLatencyRendition } from '../hls/ll-hls.ts';
import type { HlsServedReport, MirroredRendition } from './hls-serving.ts';
import { LoadGuard } from './load-guard.ts';
import { frameOf, isMediaMessage, MEDIA_PIPE_FD } from './media-pipe.ts';
import { toShed, type Audience } from './shedding.ts';
import { describeCodec, type BroadcastDescription, type ViewerEnd } from './viewer.ts';
import {
  PACKETS_TAKEN_EVERY,
  serveViewers,
  type FromViewerProcess,
  type ViewerPort,
  type ToViewerProcess,
  type ViewerCalls,
  type ViewerProcessSettings,
} from './viewer-process.ts';

/** Viewers joining or losing pictures ask the publisher for a keyframe at most this often. */
const KEYFRAME_REQUEST_MS = 500;
/**
 * RTP packets posted to a viewer process and not yet taken, past which it is sent no more until
 * it catches up (about 4 s of a 4 Mbit/s stream): a process that stalls must not have the
 * publisher's packets queued for it without end, as its UDP sockets' buffers never did. Its
 * viewers see the loss, and resume at a keyframe.
 */
const MAX_PACKET_BACKLOG = 2_048;
/**
 * Media posted to a viewer process and not yet taken, past which it is sent no more of an LL-HLS
 * rendition (about 100 s of a 2.5 Mbit/s one): a process that stalls must not have it queued
 * here without end.
 */
const MAX_MEDIA_BACKLOG_BYTES = 32 * 1024 * 1024;
/** A viewer process's report asked for (reportHls) is waited for this long at most. */
const REPORT_TIMEOUT_MS = 2_000;
/** A child that has not exited this long after its channel closed is killed. */
const STOP_TIMEOUT_MS = 2_000;
/**
 * A call the viewer process has not answered in this long fails (an answer's ICE gathering waits
 * 5 s at most): a stuck process must not hold a WHEP request, a Sora socket or the live
 * process's close.
 */
const CALL_TIMEOUT_MS = 15_000;

/**
 * A viewer process: its output the live process's, messages as structured clones over IPC
 * (sockets too), media on a pipe of its own.
 */
const CHILD_OPTIONS: ForkOptions = {
  serialization: 'advanced',
  // The media pipe is descriptor 4 (MEDIA_PIPE_FD).
  stdio: ['ignore', 'inherit', 'inherit', 'ipc', 'pipe'],
};

/**
 * The viewer process's entry. In a bundle (scripts/build.mjs) this URL names the entry's own
 * bundle; from source it names the TypeScript file, which source-entry.mjs beside it loads
 * through tsx.
 */
const PROCESS_ENTRY = new URL('./viewer-process.entry.ts', import.meta.url);

/**
 * How many viewer processes the configuration asks for: LIVE_VIEWER_PROCESSES, else its earlier
 * name (with a warning), else one per core.
 */
export function viewerProcessCount(
  config: Pick<Config, 'LIVE_VIEWER_PROCESSES' | 'LIVE_VIEWER_THREADS'>,
  log: Pick<Logger, 'warn'>,
): number {
  const { LIVE_VIEWER_PROCESSES, LIVE_VIEWER_THREADS } = config;
  if (LIVE_VIEWER_PROCESSES !== undefined) return LIVE_VIEWER_PROCESSES;
  if (LIVE_VIEWER_THREADS === undefined) return availableParallelism();
  log.warn('LIVE_VIEWER_THREADS is read as LIVE_VIEWER_PROCESSES, its new name: set that instead');
  return LIVE_VIEWER_THREADS;
}

export interface ViewerProcessesOptions {
  /** Child processes for viewers (LIVE_VIEWER_PROCESSES); 0 serves them in this process. */
  processes: number;
  /** LIVE_MAX_EVENT_LOOP_UTILIZATION, applied to each process. */
  maxLoad: number;
  loadWindowMs: number;
  settings: ViewerProcessSettings;
}

/**
 * One publisher's media to WebRTC viewers, in the live process: its tracks' packets (of the codec
 * it chose only), serialised once and passed to each viewer process that has viewers of it; the
 * viewers' keyframe requests passed on to the publisher, rate-limited (the ladder's ffmpeg
 * takes none).
 */
export class Broadcast {
  readonly description: BroadcastDescription;
  private readonly subscriptions: (() => void)[] = [];
  private lastKeyframeRequest = 0;

  /** `streamId`: the publisher's connection id, the viewers' stream. */
  constructor(
    private readonly media: PublishedMedia,
    streamId: string,
    /** Whose broadcast it is: its viewers are shed by it (toShed). */
    readonly audience: Audience,
    private readonly processes: ViewerProcesses,
  ) {
    const lowerRungs = media.lowerRungs?.tracks ?? [];
    const lowerCodec = media.lowerRungs?.codec;
    this.description = {
      id: randomBytes(8).toString('hex'),
      streamId,
      video: describeCodec(media.video.codec),
      rungs: 1 + lowerRungs.length,
      // Their own codec only when it is not the first's (a VP8 publisher's).
      ...(lowerCodec && lowerCodec.mimeType.toLowerCase() !== media.video.codec.mimeType.toLowerCase()
        ? { lowerCodec: describeCodec(lowerCodec) }
        : {}),
      audio: media.audio ? describeCodec(media.audio.codec) : undefined,
    };
    this.subscribe(media.video.track, 'video', 0, media.video.codec.payloadType);
    // The ladder's rungs carry their own codec's packets only (rtp-source.ts).
    for (const [below, track] of lowerRungs.entries()) this.subscribe(track, 'video', below + 1, undefined);
    if (media.audio) this.subscribe(media.audio.track, 'audio', 0, media.audio.codec.payloadType);
    processes.broadcasts.set(this.description.id, this);
  }

  private subscribe(
    track: MediaStreamTrack,
    kind: 'video' | 'audio',
    rung: number,
    /** The payload type forwarded (undefined: every packet). */
    payloadType: number | undefined,
  ): void {
    const { unSubscribe } = track.onReceiveRtp.subscribe((packet: RtpPacket) => {
      if (payloadType === undefined || packet.header.payloadType === payloadType)
        this.processes.forward(this.description.id, kind, rung, packet);
    });
    this.subscriptions.push(unSubscribe);
  }

  requestKeyframe(): void {
    if (Date.now() - this.lastKeyframeRequest < KEYFRAME_REQUEST_MS) return;
    this.lastKeyframeRequest = Date.now();
    this.media.requestKeyframe();
  }

  close(): void {
    for (const unsubscribe of this.subscriptions) unsubscribe();
    this.processes.broadcasts.delete(this.description.id);
  }
}

/** A string's FNV-1a hash: spreads clients over processes alike whatever their names. */
function hashOf(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}

/**
 * A WebRTC viewer seen from the live process: its peer connection lives in a viewer process, and
 * each operation is a call there.
 */
export class RemoteViewer {
  readonly id = randomBytes(10).toString('hex');
  /** When it was admitted: a broadcast's newest are shed first (toShed). */
  readonly admittedAt = performance.now();
  private markEnded!: (why: ViewerEnd) => void;
  /** Settles once the viewer is gone: its connection failed or closed, or close() was called. */
  readonly ended = new Promise<ViewerEnd>((resolve) => (this.markEnded = resolve));
  private gone = false;

  constructor(
    private readonly process: ViewerProcess,
    /** The broadcast it watches (its description's id). */
    readonly broadcast: string,
    readonly audience: Audience,
  ) {}

  /** WHEP: answers the viewer's offer, every candidate of ours in the answer. */
  answer(offer: string): Promise<string> {
    return this.process.call(this.id, 'answer', offer);
  }

  /** Sora signaling `recvonly`: our offer to send the publisher's video and audio. */
  offer(): Promise<SoraOffer> {
    return this.process.call(this.id, 'offer', undefined);
  }

  /** Sora signaling: the viewer's answer to offer(). */
  accept(answer: string): Promise<void> {
    return this.process.call(this.id, 'accept', answer);
  }

  addCandidate(candidate: Candidate): Promise<void> {
    return this.process.call(this.id, 'addCandidate', candidate);
  }

  async close(why: ViewerEnd = 'closed'): Promise<void> {
    if (this.gone) return;
    await this.process.call(this.id, 'close', why).catch(() => this.end('closed'));
  }

  /** The process says it ended (or the process itself did). */
  end(why: ViewerEnd): void {
    this.gone = true;
    this.markEnded(why);
  }
}

/**
 * A viewer child process as a port: messages over its IPC channel (structured clones), and its
 * event loop's utilization as it reports it (another process's loop cannot be measured from here).
 */
class ChildPort implements ViewerPort<FromViewerProcess, ToViewerProcess> {
  private utilization: EventLoopUtilization = { idle: 0, active: 0, utilization: 0 };

  /** Its media pipe (media-pipe.ts). */
  private readonly media: Writable;

  constructor(private readonly child: ChildProcess) {
    this.media = child.stdio[MEDIA_PIPE_FD] as Writable;
    // Gone with the process: its exit is handled on its own.
    this.media.on('error', () => {});
    child.on('message', (message: FromViewerProcess) => {
      if (message.type === 'load') this.utilization = message.utilization;
    });
  }

  postMessage(message: ToViewerProcess): void {
    if (!this.child.connected) return;
    if (!isMediaMessage(message)) this.child.send(message);
    else {
      this.media.cork();
      for (const part of frameOf(message)) this.media.write(part);
      this.media.uncork();
    }
  }

  /** Bytes of media written to the process and not yet taken by it. */
  get mediaBacklog(): number {
    return this.media.writableLength;
  }

  sendSocket(message: ToViewerProcess, socket: Socket): void {
    if (!this.child.connected) socket.destroy();
    // Not sent (the process is going): the client connects again.
    else this.child.send(message, socket, (error) => error && socket.destroy());
  }

  on(event: 'message', listener: (message: FromViewerProcess, socket?: Socket) => void): void {
    this.child.on(event, listener);
  }

  /** As performance.eventLoopUtilization, of the child's loop as last reported. */
  readonly eventLoopUtilization = (
    current?: EventLoopUtilization,
    previous?: EventLoopUtilization,
  ): EventLoopUtilization =>
    current ? performance.eventLoopUtilization(current, previous) : this.utilization;
}

/**
 * One viewer process: its port, its load guard (admission and shedding by its own event-loop
 * utilization), its viewers, and how many of them watch each broadcast (it is sent the packets of
 * those only).
 */
export class ViewerProcess {
  readonly guard: LoadGuard;
  readonly viewers = new Map<string, RemoteViewer>();
  private readonly watching = new Map<string, number>();
  /** The video rungs of each broadcast that the process's viewers watch (it says which). */
  private readonly watchedRungs = new Map<string, Set<number>>();
  private readonly calls = new Map<number, { resolve(result: unknown): void; reject(error: Error): void }>();
  private nextCall = 0;
  /** RTP packets posted and not yet taken (the process says every PACKETS_TAKEN_EVERY). */
  private packetBacklog = 0;
  /** The LL-HLS renditions mirrored here from their first byte, by key (MirroredRendition). */
  readonly mirrored = new Set<string>();
  /** Its LL-HLS requests held and new clients waiting, as it last said. */
  hls = { held: 0, waiting: 0 };
  /** Told of its next LL-HLS report (reportHls). */
  private readonly reportsAwaited: (() => void)[] = [];
  /** Told once its LL-HLS connections have all closed (drainHls), or it is gone. */
  private readonly drainsAwaited: (() => void)[] = [];
  /** Settles at the process's first message: it has started. */
  readonly started: Promise<void>;

  constructor(
    private readonly port: ViewerPort<FromViewerProcess, ToViewerProcess>,
    measure: (current?: EventLoopUtilization, previous?: EventLoopUtilization) => EventLoopUtilization,
    options: ViewerProcessesOptions,
    private readonly pool: ViewerProcesses,
  ) {
    this.guard = new LoadGuard(options.maxLoad, options.loadWindowMs, measure);
    this.guard.whenStarving((count) => this.shed(count));
    port.on('message', (message: FromViewerProcess, socket?: Socket) => this.receive(message, socket));
    // A child says its load every LOAD_REPORT_MS from its start; the live process's own end of a
    // channel has started already.
    this.started =
      port.sendSocket === undefined
        ? Promise.resolve()
        : new Promise((resolve) => port.on('message', () => resolve()));
  }

  /** Drops the channel's mirrored renditions from `mirrored`, but those of the session `keeping`. */
  forgetMirrored(channelId: string, keeping?: string): void {
    for (const key of this.mirrored)
      if (key.startsWith(`${channelId}/`) && !key.startsWith(`${channelId}/${keeping}/`))
        this.mirrored.delete(key);
  }

  /** What the process answered of LL-HLS, reported now (within REPORT_TIMEOUT_MS). */
  reportHls(): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, REPORT_TIMEOUT_MS);
      this.reportsAwaited.push(() => {
        clearTimeout(timer);
        resolve();
      });
      this.post({ type: 'hls-report' });
    });
  }

  /**
   * Resolves once the LL-HLS connections handed to the process have closed, each after the
   * answer in hand (hls-serving.ts), or when `graceMs` have passed and it cut the rest.
   */
  drainHls(graceMs: number): Promise<void> {
    return new Promise((resolve) => {
      // The process cuts what is left at graceMs: a moment later it has said so, or it is stuck.
      const timer = setTimeout(resolve, graceMs + REPORT_TIMEOUT_MS);
      this.drainsAwaited.push(() => {
        clearTimeout(timer);
        resolve();
      });
      this.post({ type: 'hls-drain', graceMs });
    });
  }

  /** Bytes of media posted to the process and not yet taken by it. */
  get mediaBacklog(): number {
    return this.port.mediaBacklog ?? 0;
  }

  /** A viewer's connection for its LL-HLS (`head`: the bytes read of it). */
  handOff(socket: Socket, head: Buffer): void {
    this.port.sendSocket!({ type: 'hls-connection', head }, socket);
  }

  /** A viewer of `broadcast` here (admitted by this process's guard already). */
  open(broadcast: Broadcast): RemoteViewer {
    const { id } = broadcast.description;
    const viewer = new RemoteViewer(this, id, broadcast.audience);
    this.viewers.set(viewer.id, viewer);
    this.watching.set(id, (this.watching.get(id) ?? 0) + 1);
    this.post({ type: 'open', viewer: viewer.id, broadcast: broadcast.description });
    void viewer.ended.then(() => {
      this.viewers.delete(viewer.id);
      const left = this.watching.get(id)! - 1;
      if (left > 0) this.watching.set(id, left);
      else {
        this.watching.delete(id);
        this.watchedRungs.delete(id);
      }
    });
    return viewer;
  }

  /** Whether the process's viewers watch the broadcast's `kind` (video: its rung `rung`). */
  watches(broadcastId: string, kind: 'video' | 'audio', rung: number): boolean {
    if (kind === 'audio') return this.watching.has(broadcastId);
    return this.watchedRungs.get(broadcastId)?.has(rung) ?? false;
  }

  call<M extends keyof ViewerCalls>(
    viewer: string,
    method: M,
    argument: ViewerCalls[M]['argument'],
  ): Promise<ViewerCalls[M]['result']> {
    const call = this.nextCall++;
    const answered = new Promise<unknown>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.calls.delete(call);
        reject(new Error(`the viewer process did not answer ${method} in time`));
      }, CALL_TIMEOUT_MS);
      timer.unref();
      const settled = () => clearTimeout(timer);
      this.calls.set(call, {
        resolve: (result) => {
          settled();
          resolve(result);
        },
        reject: (error) => {
          settled();
          reject(error);
        },
      });
    });
    this.post({ type: 'call', call, viewer, method, argument });
    return answered as Promise<ViewerCalls[M]['result']>;
  }

  post(message: ToViewerProcess): void {
    this.port.postMessage(message);
  }

  /** One RTP packet, unless the process is too far behind taking them. */
  postPacket(broadcast: string, kind: 'video' | 'audio', rung: number, bytes: Buffer): void {
    if (this.packetBacklog >= MAX_PACKET_BACKLOG) return;
    this.packetBacklog++;
    const copy = new Uint8Array(bytes);
    this.port.postMessage({ type: 'rtp', broadcast, kind, rung, bytes: copy } satisfies ToViewerProcess, [
      copy.buffer,
    ]);
  }

  /**
   * Ends `count` viewers, the newest of the largest tenant's largest audience first (toShed):
   * the process stays saturated, every viewer would fall behind.
   */
  private shed(count: number): void {
    const shed = toShed(
      this.viewers.values(),
      count,
      (viewer) => viewer.audience,
      (viewer) => viewer.admittedAt,
    );
    this.pool.onShed(shed.length);
    for (const viewer of shed) void viewer.close('no-room');
  }

  private receive(message: FromViewerProcess, socket: Socket | undefined): void {
    switch (message.type) {
      case 'reply': {
        const pending = this.calls.get(message.call);
        this.calls.delete(message.call);
        if (!message.error) pending?.resolve(message.result);
        else if (message.error.status !== undefined) {
          pending?.reject(new PublishError(message.error.status, message.error.message));
        } else pending?.reject(new Error(message.error.message));
        break;
      }
      case 'ended':
        this.viewers.get(message.viewer)?.end(message.why);
        break;
      case 'taken':
        this.packetBacklog = Math.max(0, this.packetBacklog - PACKETS_TAKEN_EVERY);
        break;
      case 'keyframe':
        this.pool.broadcasts.get(message.broadcast)?.requestKeyframe();
        break;
      case 'rungs':
        // Its viewers may all have ended meanwhile: then the broadcast is no longer watched here.
        if (this.watching.has(message.broadcast))
          this.watchedRungs.set(message.broadcast, new Set(message.rungs));
        break;
      case 'load':
        // Read by the child's port, which measures for the guard.
        break;
      case 'hls-served': {
        const { held, waiting } = message.report;
        this.hls = { held, waiting };
        this.pool.hlsServed(message.report);
        for (const reported of this.reportsAwaited.splice(0)) reported();
        break;
      }
      case 'hls-return':
        if (socket) this.pool.hlsReturned(socket, Buffer.from(message.head));
        break;
      case 'hls-drained':
        for (const drained of this.drainsAwaited.splice(0)) drained();
        break;
    }
  }

  /** The viewer process is gone (crashed, or the live process closes): its viewers and calls with it. */
  fail(error: Error): void {
    for (const pending of this.calls.values()) pending.reject(error);
    this.calls.clear();
    for (const viewer of this.viewers.values()) viewer.end('closed');
    // Its connections went with it.
    for (const drained of this.drainsAwaited.splice(0)) drained();
    this.guard.close();
  }
}

/** What the live process does with what its child processes say of LL-HLS (serveHls). */
interface HlsHooks {
  served: (report: HlsServedReport) => void;
  returned: (socket: Socket, head: Buffer) => void;
}

/**
 * The processes WebRTC viewers run on. Every viewer's packets are encrypted and sent where its
 * peer connection lives: on one thread a 2-core machine kept up about 100 werift viewers of a
 * 4 Mbit/s stream, and past that every viewer and the publisher's own ingest fell behind
 * together. So the viewers' peer connections (node-datachannel, whose native addon cannot run in
 * worker threads) live in child processes (LIVE_VIEWER_PROCESSES, one per core by default),
 * started at the first viewer; the live process keeps signaling and ingest, and passes each
 * publisher packet to the processes with viewers of it. A viewer goes to the process with the
 * fewest viewers that its load guard admits. Once told to (serveHls), the processes also answer
 * LL-HLS (hls-serving.ts), and start at once.
 */
export class ViewerProcesses {
  readonly broadcasts = new Map<string, Broadcast>();
  /**
   * Started at the first viewer (or serveHls); one that dies is started again at the next
   * admission or mirror.
   */
  private readonly processes: ViewerProcess[] = [];
  /** How each process is ended: its child killed, or its channel closed. */
  private readonly stops = new Map<ViewerProcess, () => Promise<unknown>>();
  private closed = false;
  private hlsHooks: HlsHooks | undefined;

  constructor(
    private readonly options: ViewerProcessesOptions,
    readonly log: Logger,
    /** Told how many viewers a starving process sheds. */
    readonly onShed: (count: number) => void,
    /** Told of each child started (tests kill one to see its viewers go). */
    private readonly onChild: (child: ChildProcess) => void = () => {},
  ) {}

  /** A process with room for one more viewer (counted by its guard until it `left`), or none. */
  admit(): { process: ViewerProcess; left(): void } | undefined {
    if (this.closed) return undefined;
    this.startAll();
    const byViewers = [...this.processes].sort((a, b) => a.viewers.size - b.viewers.size);
    const chosen = byViewers.find((candidate) => candidate.guard.admit());
    return chosen && { process: chosen, left: () => chosen.guard.left() };
  }

  /**
   * The child processes serve LL-HLS from now on, started at once (with LIVE_VIEWER_PROCESSES 0
   * the live process does): `served` is given what each answered, `returned` the connections
   * each gives back.
   */
  serveHls(hooks: HlsHooks): void {
    if (this.options.processes === 0) return;
    this.hlsHooks = hooks;
    // Started now, not with the first publisher, whose ffmpeg they would slow (by 0.2 s to the
    // first segment, measured from source): they mirror each rendition from its first byte.
    this.startAll();
  }

  /** Whether the child processes serve LL-HLS (serveHls). */
  get servesHls(): boolean {
    return this.hlsHooks !== undefined && !this.closed;
  }

  /** A child's report of what it answered. */
  hlsServed(report: HlsServedReport): void {
    this.hlsHooks?.served(report);
  }

  /** See ViewerProcess.drainHls: every child's LL-HLS connections. */
  async drainHls(graceMs: number): Promise<void> {
    if (this.servesHls) await Promise.all(this.processes.map((viewers) => viewers.drainHls(graceMs)));
  }

  /** A connection a child gives back. */
  hlsReturned(socket: Socket, head: Buffer): void {
    if (this.hlsHooks) this.hlsHooks.returned(socket, head);
    else socket.destroy();
  }

  /**
   * Mirrors an LL-HLS rendition into every child process from its first byte (it has pushed
   * none yet), so that its viewers' connections can be handed to any of them.
   */
  mirror(opening: MirroredRendition, rendition: LowLatencyRendition): void {
    if (!this.servesHls) return;
    this.startAll();
    const { channelId, connectionId } = opening;
    for (const viewers of this.processes) {
      viewers.post({ type: 'hls-open', rendition: opening });
      // The channel's earlier session is dropped there too.
      viewers.forgetMirrored(channelId, connectionId);
      viewers.mirrored.add(opening.key);
    }
    rendition.onInput((bytes) => {
      for (const viewers of this.processes) {
        if (!viewers.mirrored.has(opening.key)) continue;
        if (viewers.mediaBacklog <= MAX_MEDIA_BACKLOG_BYTES) {
          viewers.post({ type: 'hls-bytes', key: opening.key, bytes });
          continue;
        }
        // A process this far behind gives the channel's viewers back, and gets no more of it.
        viewers.forgetMirrored(channelId);
        viewers.post({ type: 'hls-forget', channelId });
      }
    });
  }

  /** The channel is gone: its renditions are mirrored no more. */
  forget(channelId: string): void {
    for (const viewers of this.processes) {
      viewers.post({ type: 'hls-forget', channelId });
      viewers.forgetMirrored(channelId);
    }
  }

  /**
   * Hands a viewer's connection, whose first request is a file of the mirrored rendition `key`,
   * to a process mirroring it; false when none does. A client's connections all go to one
   * process (a browser opens several), so that it is admitted, capped and counted there once,
   * as the live process itself did before.
   */
  handOff(key: string, client: string, socket: Socket, head: Buffer): boolean {
    const mirroring = this.processes.filter((viewers) => viewers.mirrored.has(key));
    if (mirroring.length === 0) return false;
    mirroring[hashOf(client) % mirroring.length]!.handOff(socket, head);
    return true;
  }

  /** Settles once every process has started (readiness: a live process's viewers wait for them). */
  async started(): Promise<void> {
    await Promise.all(this.processes.map((viewers) => viewers.started));
  }

  /** What each child process answered of LL-HLS, reported now: before usage is written, and at the end. */
  async reportHls(): Promise<void> {
    if (this.servesHls) await Promise.all(this.processes.map((viewers) => viewers.reportHls()));
  }

  /** LL-HLS requests held and new clients waiting in the child processes, as they last said. */
  get hlsHeld(): number {
    return this.processes.reduce((sum, viewers) => sum + viewers.hls.held, 0);
  }

  get hlsWaiting(): number {
    return this.processes.reduce((sum, viewers) => sum + viewers.hls.waiting, 0);
  }

  /** The busiest viewer process's utilization over its last window, 0 to 1 (0 before any). */
  get load(): number {
    return Math.max(0, ...this.processes.map((viewers) => viewers.guard.load));
  }

  /** One packet of a broadcast's track (video: of rung `rung`), to every process with viewers of it. */
  forward(broadcastId: string, kind: 'video' | 'audio', rung: number, packet: RtpPacket): void {
    let bytes: Buffer | undefined;
    for (const viewers of this.processes) {
      if (!viewers.watches(broadcastId, kind, rung)) continue;
      bytes ??= packet.serialize();
      viewers.postPacket(broadcastId, kind, rung, bytes);
    }
  }

  private startAll(): void {
    while (this.processes.length < Math.max(1, this.options.processes)) this.processes.push(this.start());
  }

  private start(): ViewerProcess {
    if (this.options.processes === 0) {
      const { port1, port2 } = new MessageChannel();
      serveViewers(port2, this.options.settings);
      const inProcess = new ViewerProcess(port1, performance.eventLoopUtilization, this.options, this);
      // Listening refs a port: neither end may keep the process alive (the viewers' sockets do).
      port1.unref();
      port2.unref();
      this.stops.set(inProcess, async () => port1.close());
      return inProcess;
    }
    const fromSource = PROCESS_ENTRY.pathname.endsWith('.ts');
    const settings = JSON.stringify(this.options.settings);
    // Bundled, with node's flags as the live process has them (source maps, heap size); from
    // source, with none (a test runner's loaders among them).
    const child = fromSource
      ? fork(new URL('source-entry.mjs', PROCESS_ENTRY), [PROCESS_ENTRY.href, settings], {
          ...CHILD_OPTIONS,
          execArgv: [],
        })
      : fork(PROCESS_ENTRY, [settings], CHILD_OPTIONS);
    // Its viewers are the child's: it must not keep a closing live process alive (it exits once
    // its channel closes).
    child.unref();
    child.channel?.unref();
    const port = new ChildPort(child);
    const viewers = new ViewerProcess(port, port.eventLoopUtilization, this.options, this);
    this.stops.set(viewers, async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      // It exits when its channel closes, and leaves stop signals to this process.
      if (child.connected) child.disconnect();
      const stuck = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
      await exited;
      clearTimeout(stuck);
    });
    this.onChild(child);
    child.on('error', (error) => this.log.error({ err: error }, 'a WebRTC viewer process failed'));
    child.on('exit', (code, signal) =>
      this.remove(viewers, new Error(`the viewer process exited (${signal ?? `code ${code}`})`)),
    );
    return viewers;
  }

  /** A process that died takes its viewers with it. */
  private remove(viewers: ViewerProcess, error: Error): void {
    viewers.fail(error);
    this.stops.delete(viewers);
    const index = this.processes.indexOf(viewers);
    if (index >= 0) this.processes.splice(index, 1);
  }

  /** Ends the processes; the viewers were closed before (the core's close). */
  async close(): Promise<void> {
    this.closed = true;
    const stops = [...this.stops.values()];
    this.stops.clear();
    for (const viewers of this.processes.splice(0)) viewers.fail(new Error('the live server is closing'));
    await Promise.all(stops.map((stop) => stop()));
  }
}
