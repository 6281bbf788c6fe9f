/** Counts of waiting requests by key, each bounded. */
export class WaitingCounts {
  private readonly counts = new Map<string, number>();

  constructor(private readonly limit: number) {}

  take(key: string): boolean {
    const count = this.counts.get(key) ?? 0;
    if (count >= this.limit) return false;
    this.counts.set(key, count + 1);
    return true;
  }

  release(key: string): void {
    const count = this.counts.get(key)! - 1;
    if (count === 0) this.counts.delete(key);
    else this.counts.set(key, count);
  }
}
