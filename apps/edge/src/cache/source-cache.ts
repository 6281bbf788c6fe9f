import type { FetchedImage } from '../origins/errors.ts';

interface Held {
  image: FetchedImage;
  originId: number;
  until: number;
}

/**
 * Originals fetched from origins, kept for a few seconds: a page's srcset asks for several
 * widths of one image at once, and each would otherwise fetch the same original again. Kept
 * no longer than the variants made from it may be (the caller's `ttlMs`) nor than a few
 * seconds, so a replaced original shows at once after its purge (which drops the origin's
 * entries) and within seconds without one.
 */
export class SourceCache {
  private readonly held = new Map<string, Held>();
  private bytes = 0;

  constructor(
    private readonly options: { maxTtlMs: number; maxBytes: number },
    private readonly now: () => number = Date.now,
  ) {}

  get(key: string): FetchedImage | undefined {
    const entry = this.held.get(key);
    if (!entry) return undefined;
    if (entry.until <= this.now()) {
      this.remove(key, entry);
      return undefined;
    }
    return entry.image;
  }

  put(key: string, originId: number, image: FetchedImage, ttlMs: number): void {
    const keepMs = Math.min(ttlMs, this.options.maxTtlMs);
    if (keepMs <= 0 || image.data.length > this.options.maxBytes / 4) return;
    const existing = this.held.get(key);
    if (existing) this.remove(key, existing);
    this.held.set(key, { image, originId, until: this.now() + keepMs });
    this.bytes += image.data.length;
    for (const [oldest, entry] of this.held) {
      if (this.bytes <= this.options.maxBytes) break;
      this.remove(oldest, entry);
    }
  }

  forgetOrigin(originId: number): void {
    for (const [key, entry] of this.held) if (entry.originId === originId) this.remove(key, entry);
  }

  private remove(key: string, entry: Held): void {
    this.held.delete(key);
    this.bytes -= entry.image.data.length;
  }
}
