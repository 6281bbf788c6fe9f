import { randomBytes } from 'node:crypto';
import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import type { Logger } from 'pino';
import type { MediaStreamTrack, RtpPacket } from 'werift';
import { PublishError } from '../ingest/ingest.ts';
import type { Candidate, PublishedMedia, SoraOffer } from '../ingest/webrtc.ts';
import { LoadGuard } from './load-guard.ts';
import { describeCodec, type BroadcastDescription, type ViewerEnd } from './viewer.ts';
import {
  PACKETS_TAKEN_EVERY,
  serveViewers,
  type FromViewerThread,
  type ToViewerThread,
  type ViewerCalls,
  type ViewerThreadSettings,
} from './viewer-thread.ts';

/** Viewers joining or losing pictures ask the publisher for a keyframe at most this often. */
const KEYFRAME_REQUEST_MS = 500;
/**
 * RTP packets posted to a thread and not yet taken, past which it is sent no more until it
 * catches up (about 4 s of a 4 Mbit/s stream): a thread that stalls must not queue the
 * publisher's packets without end, as its UDP sockets' buffers never did. Its viewers see the
 * loss, and resume at a keyframe.
 */
const MAX_PACKET_BACKLOG = 2_048;
/**
 * A call the thread has not answered in this long fails (an answer's ICE gathering waits 5 s at
 * most): a stuck thread must not hold a WHEP request, a Sora socket or the process's close.
 */
const CALL_TIMEOUT_MS = 15_000;

/**
 * The worker entry. In a bundle (scripts/build.mjs) this URL names the entry's own bundle;
 * from source it names the TypeScript file, which source-thread.mjs beside it loads through tsx.
 */
const THREAD_ENTRY = new URL('./viewer-thread.entry.ts', import.meta.url);

export interface ViewerThreadsOptions {
  /** Worker threads for viewers (LIVE_VIEWER_THREADS); 0 serves them on this thread. */
  threads: number;
  /** LIVE_MAX_EVENT_LOOP_UTILIZATION, applied to each thread. */
  maxLoad: number;
  loadWindowMs: number;
  settings: ViewerThreadSettings;
}

/**
 * One publisher's media to WebRTC viewers, on the main thread: its tracks' packets (of the codec
 * it chose only), serialised once and passed to each viewer thread that has viewers of it; the
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
    private readonly threads: ViewerThreads,
  ) {
    this.description = {
      id: randomBytes(8).toString('hex'),
      streamId,
      video: describeCodec(media.video.codec),
      audio: media.audio ? describeCodec(media.audio.codec) : undefined,
    };
    this.subscribe(media.video.track, 'video', media.video.codec.payloadType);
    if (media.audio) this.subscribe(media.audio.track, 'audio', media.audio.codec.payloadType);
    threads.broadcasts.set(this.description.id, this);
  }

  private subscribe(track: MediaStreamTrack, kind: 'video' | 'audio', payloadType: number | undefined): void {
    const { unSubscribe } = track.onReceiveRtp.subscribe((packet: RtpPacket) => {
      if (packet.header.payloadType === payloadType) this.threads.forward(this.description.id, kind, packet);
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
    this.threads.broadcasts.delete(this.description.id);
  }
}

/**
 * A WebRTC viewer seen from the main thread: its peer connection lives in a viewer thread, and
 * each operation is a call there.
 */
export class RemoteViewer {
  readonly id = randomBytes(10).toString('hex');
  /** When it was admitted: the newest are shed first. */
  readonly admittedAt = performance.now();
  private markEnded!: (why: ViewerEnd) => void;
  /** Settles once the viewer is gone: its connection failed or closed, or close() was called. */
  readonly ended = new Promise<ViewerEnd>((resolve) => (this.markEnded = resolve));
  private gone = false;

  constructor(private readonly thread: ViewerThread) {}

  /** WHEP: answers the viewer's offer, every candidate of ours in the answer. */
  answer(offer: string): Promise<string> {
    return this.thread.call(this.id, 'answer', offer);
  }

  /** Sora signaling `recvonly`: our offer to send the publisher's video and audio. */
  offer(): Promise<SoraOffer> {
    return this.thread.call(this.id, 'offer', undefined);
  }

  /** Sora signaling: the viewer's answer to offer(). */
  accept(answer: string): Promise<void> {
    return this.thread.call(this.id, 'accept', answer);
  }

  addCandidate(candidate: Candidate): Promise<void> {
    return this.thread.call(this.id, 'addCandidate', candidate);
  }

  async close(why: ViewerEnd = 'closed'): Promise<void> {
    if (this.gone) return;
    await this.thread.call(this.id, 'close', why).catch(() => this.end('closed'));
  }

  /** The thread says it ended (or the thread itself did). */
  end(why: ViewerEnd): void {
    this.gone = true;
    this.markEnded(why);
  }
}

/** What a viewer thread is reached through: a worker, or one end of a MessageChannel. */
type ThreadPort = Worker | MessagePort;

/**
 * One viewer thread: its port, its load guard (admission and shedding by its own event-loop
 * utilization), its viewers, and how many of them watch each broadcast (it is sent the packets of
 * those only).
 */
export class ViewerThread {
  readonly guard: LoadGuard;
  readonly viewers = new Map<string, RemoteViewer>();
  private readonly watching = new Map<string, number>();
  private readonly calls = new Map<number, { resolve(result: unknown): void; reject(error: Error): void }>();
  private nextCall = 0;
  /** RTP packets posted and not yet taken (the thread says every PACKETS_TAKEN_EVERY). */
  private packetBacklog = 0;

  constructor(
    private readonly port: ThreadPort,
    measure: (current?: EventLoopUtilization, previous?: EventLoopUtilization) => EventLoopUtilization,
    options: ViewerThreadsOptions,
    private readonly pool: ViewerThreads,
  ) {
    this.guard = new LoadGuard(options.maxLoad, options.loadWindowMs, measure);
    this.guard.whenStarving((count) => this.shed(count));
    port.on('message', (message: FromViewerThread) => this.receive(message));
  }

  /** A viewer of `broadcast` here (admitted by this thread's guard already). */
  open(broadcast: Broadcast): RemoteViewer {
    const viewer = new RemoteViewer(this);
    const { id } = broadcast.description;
    this.viewers.set(viewer.id, viewer);
    this.watching.set(id, (this.watching.get(id) ?? 0) + 1);
    this.post({ type: 'open', viewer: viewer.id, broadcast: broadcast.description });
    void viewer.ended.then(() => {
      this.viewers.delete(viewer.id);
      const left = this.watching.get(id)! - 1;
      if (left === 0) this.watching.delete(id);
      else this.watching.set(id, left);
    });
    return viewer;
  }

  watches(broadcastId: string): boolean {
    return this.watching.has(broadcastId);
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
        reject(new Error(`the viewer thread did not answer ${method} in time`));
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

  post(message: ToViewerThread): void {
    this.port.postMessage(message);
  }

  /** One RTP packet, unless the thread is too far behind taking them (a copy of its own, moved). */
  postPacket(broadcast: string, kind: 'video' | 'audio', bytes: Buffer): void {
    if (this.packetBacklog >= MAX_PACKET_BACKLOG) return;
    this.packetBacklog++;
    const copy = new Uint8Array(bytes);
    this.port.postMessage({ type: 'rtp', broadcast, kind, bytes: copy } satisfies ToViewerThread, [
      copy.buffer,
    ]);
  }

  /** Ends the `count` newest viewers: the thread stays saturated, every viewer would fall behind. */
  private shed(count: number): void {
    const newest = [...this.viewers.values()].sort((a, b) => b.admittedAt - a.admittedAt).slice(0, count);
    this.pool.onShed(newest.length);
    for (const viewer of newest) void viewer.close('no-room');
  }

  private receive(message: FromViewerThread): void {
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
      case 'warn':
        this.pool.log.warn({ viewer: message.viewer, err: message.error }, message.message);
        break;
    }
  }

  /** The thread is gone (crashed, or the process closes): its viewers and calls with it. */
  fail(error: Error): void {
    for (const pending of this.calls.values()) pending.reject(error);
    this.calls.clear();
    for (const viewer of this.viewers.values()) viewer.end('closed');
    this.guard.close();
  }
}

/**
 * The threads WebRTC viewers run on. Every viewer's packets are encrypted and sent on its
 * thread: on one JavaScript thread a 2-core machine kept up about 100 viewers of a 4 Mbit/s
 * stream, and past that every viewer and the publisher's own ingest fell behind together. So the
 * viewers' peer connections live in worker threads (LIVE_VIEWER_THREADS, one per core by
 * default), started at the first viewer; the main thread keeps signaling, ingest and HLS, and
 * passes each publisher packet to the threads with viewers of it. A viewer goes to the thread
 * with the fewest viewers that its load guard admits.
 */
export class ViewerThreads {
  readonly broadcasts = new Map<string, Broadcast>();
  /** Started at the first viewer; a thread that dies is started again at the next admission. */
  private readonly threads: ViewerThread[] = [];
  /** How each thread is ended: its worker terminated, or its channel closed. */
  private readonly stops = new Map<ViewerThread, () => Promise<unknown>>();
  private closed = false;

  constructor(
    private readonly options: ViewerThreadsOptions,
    readonly log: Logger,
    /** Told how many viewers a starving thread sheds. */
    readonly onShed: (count: number) => void,
    /** Told of each worker started (tests end one to see its viewers go). */
    private readonly onWorker: (worker: Worker) => void = () => {},
  ) {}

  /** A thread with room for one more viewer (counted by its guard until it `left`), or none. */
  admit(): { thread: ViewerThread; left(): void } | undefined {
    if (this.closed) return undefined;
    while (this.threads.length < Math.max(1, this.options.threads)) this.threads.push(this.startThread());
    const byViewers = [...this.threads].sort((a, b) => a.viewers.size - b.viewers.size);
    const thread = byViewers.find((candidate) => candidate.guard.admit());
    return thread && { thread, left: () => thread.guard.left() };
  }

  /** The busiest viewer thread's utilization over its last window, 0 to 1 (0 before any). */
  get load(): number {
    return Math.max(0, ...this.threads.map((thread) => thread.guard.load));
  }

  /** One packet of a broadcast's track, to every thread with viewers of it. */
  forward(broadcastId: string, kind: 'video' | 'audio', packet: RtpPacket): void {
    let bytes: Buffer | undefined;
    for (const thread of this.threads) {
      if (!thread.watches(broadcastId)) continue;
      bytes ??= packet.serialize();
      thread.postPacket(broadcastId, kind, bytes);
    }
  }

  private startThread(): ViewerThread {
    if (this.options.threads === 0) {
      const { port1, port2 } = new MessageChannel();
      serveViewers(port2, this.options.settings);
      const thread = new ViewerThread(port1, performance.eventLoopUtilization, this.options, this);
      // Listening refs a port: neither end may keep the process alive (the viewers' sockets do).
      port1.unref();
      port2.unref();
      this.stops.set(thread, async () => port1.close());
      return thread;
    }
    const fromSource = THREAD_ENTRY.pathname.endsWith('.ts');
    const worker = new Worker(fromSource ? new URL('source-thread.mjs', THREAD_ENTRY) : THREAD_ENTRY, {
      workerData: { entry: THREAD_ENTRY.href, settings: this.options.settings },
    });
    // Its viewers' sockets are the worker's: it must not keep a closing process alive.
    worker.unref();
    const thread = new ViewerThread(
      worker,
      worker.performance.eventLoopUtilization.bind(worker.performance),
      this.options,
      this,
    );
    this.stops.set(thread, () => worker.terminate());
    this.onWorker(worker);
    worker.on('error', (error) => this.log.error({ err: error }, 'a WebRTC viewer thread failed'));
    worker.on('exit', (code) => this.remove(thread, new Error(`the viewer thread exited (code ${code})`)));
    return thread;
  }

  /** A thread that died takes its viewers with it. */
  private remove(thread: ViewerThread, error: Error): void {
    thread.fail(error);
    this.stops.delete(thread);
    const index = this.threads.indexOf(thread);
    if (index >= 0) this.threads.splice(index, 1);
  }

  /** Ends the threads; the viewers were closed before (the core's close). */
  async close(): Promise<void> {
    this.closed = true;
    const stops = [...this.stops.values()];
    this.stops.clear();
    for (const thread of this.threads.splice(0)) thread.fail(new Error('the live server is closing'));
    await Promise.all(stops.map((stop) => stop()));
  }
}
