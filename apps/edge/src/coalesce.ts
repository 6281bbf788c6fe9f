/** Concurrent calls with the same key share one run: N identical misses, one fetch, one transform. */
export class Coalescer<T> {
  private readonly running = new Map<string, Promise<T>>();

  run(key: string, work: () => Promise<T>): Promise<T> {
    const current = this.running.get(key);
    if (current) return current;
    const started = work().finally(() => this.running.delete(key));
    this.running.set(key, started);
    return started;
  }
}

/** At most `limit` tasks at once; the rest wait in order. Bounds memory and CPU of transforms. */
export class Semaphore {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly limit: number) {}

  /** Tasks waiting for a slot (the queue depth metric). */
  get queued(): number {
    return this.waiting.length;
  }

  get running(): number {
    return this.active;
  }

  async use<T>(task: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.active++;
    try {
      return await task();
    } finally {
      this.active--;
      this.waiting.shift()?.();
    }
  }
}
