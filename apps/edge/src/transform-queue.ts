/** A transform refused for load, answered 503 with Retry-After: the same request may succeed soon. */
export class Overloaded extends Error {
  constructor(
    readonly reason: 'queue-full' | 'waited-too-long' | 'would-wait-too-long',
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(message);
    this.name = 'Overloaded';
  }
}

export interface TransformQueueOptions {
  /** Transforms running at once. */
  concurrency: number;
  /** Transforms waiting for a slot, in all. */
  maxWaiting: number;
  /** Bytes of fetched originals the waiting transforms may hold in memory, in all. */
  maxWaitingBytes: number;
  /** How long one may wait for a slot (the deadline to start). */
  maxWaitMs: number;
}

/** Weight of the latest transform in the running mean of their durations. */
const SERVICE_SMOOTHING = 0.2;
/** A queue that has not emptied for this long is a standing one: load, not a burst. */
const STANDING_MS = 1_000;
/** The wait admitted while the queue stands, in mean transform durations. */
const STANDING_WAIT_DURATIONS = 2;

interface Waiter {
  start: () => void;
  timer: NodeJS.Timeout;
  bytes: number;
}

/**
 * At most `concurrency` transforms at once; the rest wait, bounded in number and in time, and
 * fairly: a freed slot goes to the next tenant in turn, and no tenant may hold more than half
 * the waiting places, so one tenant's flood of misses waits behind itself, not in front of
 * everyone else's. Past either bound the transform is refused (Overloaded) instead of
 * queueing without limit; so is one that would not start within its deadline by the running
 * mean of transform durations, at once, rather than after holding its original in memory for
 * the whole deadline. The deadline is `maxWaitMs` while the queue comes and goes (a page's
 * burst of new images waits its turn), and two mean durations once it has stood for a second
 * (sustained overload): what is accepted then still answers about as fast as under normal
 * load, and the rest is told to come back (controlled delay, as CoDel does for packets).
 */
export class TransformQueue {
  private active = 0;
  private waiting = 0;
  private waitingBytes = 0;
  /** Waiters per tenant; the Map's order is the turn order. */
  private readonly queues = new Map<string, Waiter[]>();
  private readonly maxWaitingPerTenant: number;
  /** Running mean of how long a transform holds its slot, ms (0 until one finished). */
  private serviceMs = 0;
  /** When the waiting room was last empty (performance.now()). */
  private lastEmpty = performance.now();

  constructor(private readonly options: TransformQueueOptions) {
    this.maxWaitingPerTenant = Math.max(1, Math.ceil(options.maxWaiting / 2));
  }

  get queued(): number {
    return this.waiting;
  }

  get running(): number {
    return this.active;
  }

  /**
   * Why a transform of `tenant` would be refused now, or null: asked before its original is
   * fetched, so a refused request costs the origin nothing.
   */
  refusal(tenant: string): Overloaded | null {
    if (this.active < this.options.concurrency) return null;
    const now = performance.now();
    if (this.waiting === 0) this.lastEmpty = now;
    const deadline =
      now - this.lastEmpty > STANDING_MS
        ? Math.min(this.options.maxWaitMs, STANDING_WAIT_DURATIONS * this.serviceMs)
        : this.options.maxWaitMs;
    const waitMs = ((this.waiting + 1) * this.serviceMs) / this.options.concurrency;
    if (waitMs > deadline)
      return new Overloaded(
        'would-wait-too-long',
        'conversions waiting here would not start in time; try again shortly',
        Math.max(1, Math.ceil(waitMs / 1000)),
      );
    if (this.waiting >= this.options.maxWaiting)
      return new Overloaded('queue-full', 'too many conversions are waiting; try again shortly', 1);
    if ((this.queues.get(tenant)?.length ?? 0) >= this.maxWaitingPerTenant)
      return new Overloaded(
        'queue-full',
        "too many of this organization's conversions are waiting; try again shortly",
        1,
      );
    return null;
  }

  /** Runs `task`, whose original of `bytes` stays in memory while it waits, when a slot frees. */
  async run<T>(tenant: string, bytes: number, task: () => Promise<T>): Promise<T> {
    if (this.active < this.options.concurrency) this.active++;
    else await this.slot(tenant, bytes);
    const started = performance.now();
    try {
      return await task();
    } finally {
      const ms = performance.now() - started;
      this.serviceMs = this.serviceMs === 0 ? ms : this.serviceMs + SERVICE_SMOOTHING * (ms - this.serviceMs);
      this.release();
    }
  }

  /** Resolves once a finishing transform hands this one its slot (already counted as active). */
  private slot(tenant: string, bytes: number): Promise<void> {
    const refused =
      this.refusal(tenant) ??
      (this.waitingBytes + bytes > this.options.maxWaitingBytes
        ? new Overloaded('queue-full', 'too many large conversions are waiting; try again shortly', 1)
        : null);
    if (refused) return Promise.reject(refused);
    return new Promise<void>((resolve, reject) => {
      const queue = this.queues.get(tenant) ?? [];
      const waiter: Waiter = {
        bytes,
        start: resolve,
        timer: setTimeout(() => {
          this.remove(tenant, waiter);
          const seconds = Math.max(1, Math.ceil(this.options.maxWaitMs / 1000));
          reject(
            new Overloaded(
              'waited-too-long',
              'waited too long for a conversion slot; try again shortly',
              seconds,
            ),
          );
        }, this.options.maxWaitMs),
      };
      queue.push(waiter);
      this.queues.set(tenant, queue);
      this.waiting++;
      this.waitingBytes += bytes;
    });
  }

  private release(): void {
    const next = this.next();
    if (!next) {
      this.active--;
      return;
    }
    clearTimeout(next.timer);
    next.start();
  }

  /** The first waiter of the tenant whose turn it is; that tenant goes to the back of the turn. */
  private next(): Waiter | undefined {
    const first = this.queues.entries().next();
    if (first.done) return undefined;
    const [tenant, queue] = first.value;
    const waiter = queue.shift()!;
    this.queues.delete(tenant);
    if (queue.length > 0) this.queues.set(tenant, queue);
    if (--this.waiting === 0) this.lastEmpty = performance.now();
    this.waitingBytes -= waiter.bytes;
    return waiter;
  }

  private remove(tenant: string, waiter: Waiter): void {
    const queue = this.queues.get(tenant);
    const index = queue?.indexOf(waiter) ?? -1;
    if (!queue || index < 0) return;
    queue.splice(index, 1);
    if (queue.length === 0) this.queues.delete(tenant);
    if (--this.waiting === 0) this.lastEmpty = performance.now();
    this.waitingBytes -= waiter.bytes;
  }
}
