import { performance, type EventLoopUtilization } from 'node:perf_hooks';

/** Below this many viewers on average over a window, its load says little of what one costs. */
const FEW_VIEWERS = 5;
/** Viewers admitted in a window while what one costs is not known yet. */
const JOINS_WITHOUT_ESTIMATE = 20;
/**
 * Below this utilization a window shows too little work to tell what a viewer costs: viewers of
 * a publisher that paused (or has not started) cost nearly nothing until it sends again.
 */
const TOO_IDLE_TO_TELL = 0.05;
/**
 * A thread this busy is behind: its sockets' queues fill and drop the publisher's packets. A
 * limit set above it (LIVE_MAX_EVENT_LOOP_UTILIZATION) is the operator's word that the thread
 * keeps up that busy: it then starves at the limit.
 */
const STARVING = 0.97;
/**
 * Windows in a row starving, with no viewer admitted in them, before viewers are shed: a moment's
 * spike sheds no one, nor does a burst of joins' handshakes (admission stops while starving).
 * After a shed the count starts again, so that the next is decided on a window that shows it.
 */
const STARVING_WINDOWS = 2;
/** The share of the viewers shed per starving window. */
const SHED_SHARE = 0.1;
/**
 * What the thread does without viewers is known from a window without any this recent at most:
 * later its publishers may have come and gone.
 */
const WITHOUT_VIEWERS_KEPT_MS = 60_000;
/**
 * The least share of the thread's load charged to its viewers, however much of it the thread had
 * without any: that may be stale within WITHOUT_VIEWERS_KEPT_MS too, and this bounds the
 * over-estimate of the room it would make.
 */
const LEAST_SHARE_CHARGED = 0.25;

/**
 * Whether a thread can take another viewer: a viewer process's (processes.ts), where every
 * WebRTC viewer's packets are encrypted and sent, or the one answering HLS. Past what the thread
 * can do every viewer on it falls behind at once (when one thread served the publisher and its
 * WebRTC viewers, on a 2-core machine at about 100 viewers of a 4 Mbit/s stream, its ingest fell
 * to 2.8, then 0.1 Mbit/s).
 *
 * The thread's utilization is read every `windowMs`. Above `max`, new viewers are refused until
 * it falls again; viewers already watching keep what they have. Below it, the window also says
 * what a viewer costs: the utilization beyond what the thread had in a recent window without
 * viewers (its publishers' ingest, on the main thread: the load of a crowd that arrives once a
 * broadcast runs), but at least LEAST_SHARE_CHARGED of it, over the viewers it held on average.
 * Whatever else grew since is charged to them too, and with no such window lately the whole
 * thread is (over-estimates, so that admission errs toward room). The next window admits only as
 * many more as that cost leaves room for under `max`: a burst of viewers joining at once is not
 * all let in before the load they bring shows. While there are too few viewers to tell, or the
 * thread too idle (TOO_IDLE_TO_TELL), a window admits as many as it holds, and at least
 * JOINS_WITHOUT_ESTIMATE.
 *
 * The thread's load is no straight line of its viewers: on a machine whose other cores are busy
 * (encoders, other processes) it went from 0.65 at 47 viewers to 1.0 at 61, where every viewer
 * and the publisher starved, and stayed there. So a thread starving (STARVING, or `max` when
 * higher) for STARVING_WINDOWS in a row sheds SHED_SHARE of its viewers until it is not:
 * `whenStarving` says how many, and its owner chooses which (toShed: the newest of the largest
 * tenant's largest audience first).
 *
 * A viewer counts from its admission (its ICE and DTLS handshakes cost too) until `left`. A
 * limit of 1 takes every viewer and sheds none; a limit of 0 takes none.
 */
export class LoadGuard {
  private previous: EventLoopUtilization;
  private utilization = 0;
  private readonly timer: NodeJS.Timeout;
  private viewers = 0;
  /** Viewer-milliseconds since the window opened, summed up to `countedAt`. */
  private viewerMs = 0;
  private countedAt: number;
  private windowOpenedAt: number;
  /** Viewers the current window may still admit. */
  private allowance = JOINS_WITHOUT_ESTIMATE;
  private starvingWindows = 0;
  /** The last window without viewers: its utilization, and when it closed. */
  private withoutViewers = { utilization: 0, at: -Infinity };
  private admittedInWindow = 0;
  private shed: (count: number) => void = () => undefined;
  private readonly starvingAt: number;
  private windowClosed: () => void = () => undefined;

  constructor(
    private readonly max: number,
    windowMs = 3_000,
    private readonly measure: (
      current?: EventLoopUtilization,
      previous?: EventLoopUtilization,
    ) => EventLoopUtilization = performance.eventLoopUtilization,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.starvingAt = Math.max(STARVING, max);
    this.previous = this.measure();
    this.countedAt = this.windowOpenedAt = this.now();
    this.timer = setInterval(() => this.closeWindow(), windowMs);
    this.timer.unref();
  }

  /** The thread's utilization over the last window, 0 to 1. */
  get load(): number {
    return this.utilization;
  }

  /** Takes a viewer when there is room (counted until `left`), else false. */
  admit(): boolean {
    if (this.max <= 0 || (this.max < 1 && this.allowance <= 0)) return false;
    this.allowance--;
    this.admittedInWindow++;
    this.count(+1);
    return true;
  }

  /** An admitted viewer is gone (ended, or never connected). */
  left(): void {
    this.count(-1);
  }

  /** `shed` is told how many viewers to end at each starving window. */
  whenStarving(shed: (count: number) => void): void {
    this.shed = shed;
  }

  /** `listener` is told after each window, once the room the next one admits is known. */
  whenWindowCloses(listener: () => void): void {
    this.windowClosed = listener;
  }

  close(): void {
    clearInterval(this.timer);
  }

  private count(change: number): void {
    const now = this.now();
    this.viewerMs += this.viewers * (now - this.countedAt);
    this.countedAt = now;
    this.viewers += change;
  }

  private closeWindow(): void {
    const current = this.measure();
    this.utilization = this.measure(current, this.previous).utilization;
    this.previous = current;
    this.count(0);
    const averageViewers = this.viewerMs / Math.max(1, this.countedAt - this.windowOpenedAt);
    if (averageViewers === 0) this.withoutViewers = { utilization: this.utilization, at: this.countedAt };
    this.viewerMs = 0;
    this.windowOpenedAt = this.countedAt;
    const starving = this.max < 1 && this.utilization >= this.starvingAt;
    this.starvingWindows = starving && this.admittedInWindow === 0 ? this.starvingWindows + 1 : 0;
    this.admittedInWindow = 0;
    if (this.starvingWindows >= STARVING_WINDOWS && this.viewers > 0) {
      this.starvingWindows = 0;
      this.shed(Math.ceil(this.viewers * SHED_SHARE));
    }
    if (starving || this.utilization > this.max) this.allowance = 0;
    else if (averageViewers < FEW_VIEWERS || this.utilization < TOO_IDLE_TO_TELL)
      // Without an estimate the viewers at most double per window (twenty at first): a crowd
      // waiting for a broadcast to start is let in within a few windows, not all at once.
      this.allowance = Math.max(JOINS_WITHOUT_ESTIMATE, this.viewers);
    else {
      const { utilization: base, at } = this.withoutViewers;
      const viewersLoad =
        this.countedAt - at > WITHOUT_VIEWERS_KEPT_MS
          ? this.utilization
          : Math.max(this.utilization - base, this.utilization * LEAST_SHARE_CHARGED);
      const perViewer = viewersLoad / averageViewers;
      this.allowance = Math.floor(this.max / perViewer) - this.viewers;
    }
    this.windowClosed();
  }
}
