import type { FetchedImage } from '../origins/errors.ts';

interface Held {
  image: FetchedImage;
  originId: number;
  until: number;
  /** The latest `until` the original's cache policy and the cache's own limit allow. */
  latest: number;
}

/**
 * Originals fetched from origins, kept for a few seconds: a page's srcset asks for several
 * widths of one image at once, and each would otherwise fetch the same original again. Kept
 * no longer than the variants made from it may be (the caller's `ttlMs`) nor than `maxTtlMs`,
 * so a replaced original shows at once after its purge (which drops the origin's entries) and
 * within seconds without one.
 *
 * Most originals are asked for once (a site's many images, each in one size): an original
 * starts on probation, kept `probationMs` only, and stays until its `latest` once a second
 * variant asks for it (as a 2Q cache admits). So memory holds the last moments' originals and
 * those in demand, not the last `maxTtlMs` of every one fetched: with every miss for a new 1 MP
 * original (bench/edge.ts, `distinct`), the edge's peak RSS was 245 MB holding each 10 s, 212
 * on probation and 188 holding none (the sharp peer's 135).
 */
export class SourceCache {
  /** Both in the order entries came in, which is about the order they expire in. */
  private readonly probation = new Map<string, Held>();
  private readonly kept = new Map<string, Held>();
  private bytes = 0;

  constructor(
    private readonly options: { maxTtlMs: number; probationMs: number; maxBytes: number },
    private readonly now: () => number = Date.now,
  ) {}

  /** Bytes of originals held (at most `maxBytes`). */
  get heldBytes(): number {
    return this.bytes;
  }

  get(key: string): FetchedImage | undefined {
    const now = this.now();
    const kept = this.kept.get(key);
    if (kept) {
      if (kept.until > now) return kept.image;
      this.remove(this.kept, key, kept);
      return undefined;
    }
    const entry = this.probation.get(key);
    if (!entry) return undefined;
    if (entry.until <= now) {
      this.remove(this.probation, key, entry);
      return undefined;
    }
    // Asked for again: kept as long as it may be.
    this.probation.delete(key);
    this.kept.set(key, entry);
    entry.until = entry.latest;
    return entry.image;
  }

  put(key: string, originId: number, image: FetchedImage, ttlMs: number): void {
    const keepMs = Math.min(ttlMs, this.options.maxTtlMs);
    if (keepMs <= 0 || image.data.length > this.options.maxBytes / 4) return;
    const now = this.now();
    for (const map of [this.probation, this.kept]) {
      const existing = map.get(key);
      if (existing) this.remove(map, key, existing);
      this.dropExpired(map, now);
    }
    // Room for it, from originals on probation first, then from those kept, oldest first.
    this.bytes += image.data.length;
    for (const map of [this.probation, this.kept])
      for (const [oldest, entry] of map) {
        if (this.bytes <= this.options.maxBytes) break;
        this.remove(map, oldest, entry);
      }
    const until = now + Math.min(keepMs, this.options.probationMs);
    this.probation.set(key, { image, originId, until, latest: now + keepMs });
  }

  forgetOrigin(originId: number): void {
    for (const map of [this.probation, this.kept])
      for (const [key, entry] of map) if (entry.originId === originId) this.remove(map, key, entry);
  }

  /**
   * A map's expired entries, from its oldest up to the first that is not: entries come in about
   * the order they expire in, and one that a shorter policy let expire behind it goes in its turn.
   */
  private dropExpired(map: Map<string, Held>, now: number): void {
    for (const [key, entry] of map) {
      if (entry.until > now) return;
      this.remove(map, key, entry);
    }
  }

  private remove(map: Map<string, Held>, key: string, entry: Held): void {
    map.delete(key);
    this.bytes -= entry.image.data.length;
  }
}
