import { performance, type EventLoopUtilization } from 'node:perf_hooks';

/**
 * Whether this process can take another WebRTC viewer: every viewer's packets are encrypted and
 * sent on the one JavaScript thread, so past what the thread can do every viewer falls behind at
 * once, and the publisher's own packets go unread (on a 2-core machine at about 100 viewers of a
 * 4 Mbit/s stream, its ingest fell to 2.8, then 0.1 Mbit/s). The thread's utilization over the
 * last `windowMs` above `max` refuses new viewers until it falls again; viewers already
 * watching keep what they have. The window is long enough that a burst of viewers joining at
 * once (their ICE and DTLS handshakes) does not read as a thread full of forwarding.
 */
export class LoadGuard {
  private previous: EventLoopUtilization;
  private utilization = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly max: number,
    windowMs = 3_000,
    private readonly measure: (
      current?: EventLoopUtilization,
      previous?: EventLoopUtilization,
    ) => EventLoopUtilization = performance.eventLoopUtilization,
  ) {
    this.previous = this.measure();
    this.timer = setInterval(() => {
      const current = this.measure();
      this.utilization = this.measure(current, this.previous).utilization;
      this.previous = current;
    }, windowMs);
    this.timer.unref();
  }

  /** The thread's utilization over the last window, 0 to 1. */
  get load(): number {
    return this.utilization;
  }

  get saturated(): boolean {
    return this.utilization > this.max;
  }

  close(): void {
    clearInterval(this.timer);
  }
}
