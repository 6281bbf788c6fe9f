/** Concurrent calls with the same key share one run: N identical misses, one fetch, one transform. */
export class Coalescer<T> {
  private readonly running = new Map<string, Promise<T>>();

  /** A call with this key now would join a run already under way. */
  isRunning(key: string): boolean {
    return this.running.has(key);
  }

  run(key: string, work: () => Promise<T>): Promise<T> {
    const current = this.running.get(key);
    if (current) return current;
    const started = work().finally(() => this.running.delete(key));
    this.running.set(key, started);
    return started;
  }
}
