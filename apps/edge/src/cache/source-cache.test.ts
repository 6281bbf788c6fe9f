import { describe, expect, it } from 'vitest';
import { SourceCache } from './source-cache.ts';

const image = (bytes: number) => ({ data: Buffer.alloc(bytes), cacheControl: null, expires: null });

describe('SourceCache', () => {
  it('keeps an original for the shorter of its own time to live and the cache’s', () => {
    const clock = { now: 0 };
    const cache = new SourceCache({ maxTtlMs: 5_000, maxBytes: 1_000 }, () => clock.now);
    cache.put('a', 1, image(10), 60_000);
    cache.put('b', 1, image(10), 2_000);
    clock.now = 1_999;
    expect(cache.get('b')).toBeDefined();
    clock.now = 4_999;
    expect(cache.get('a')?.data.length).toBe(10);
    expect(cache.get('b')).toBeUndefined();
    clock.now = 5_000;
    expect(cache.get('a')).toBeUndefined();
  });

  it('drops the oldest beyond its size, and everything of a purged origin', () => {
    const cache = new SourceCache({ maxTtlMs: 60_000, maxBytes: 1_000 });
    for (const [key, origin, bytes] of [
      ['a', 1, 200],
      ['b', 1, 200],
      ['c', 2, 200],
      ['d', 2, 200],
      ['e', 2, 250],
    ] as const) {
      cache.put(key, origin, image(bytes), 60_000);
    }
    expect(cache.get('a')).toBeUndefined();
    expect(cache.get('b')).toBeDefined();
    cache.forgetOrigin(2);
    expect(cache.get('c')).toBeUndefined();
    expect(cache.get('b')).toBeDefined();
  });

  it('keeps nothing that may not be cached, nor anything too large', () => {
    const cache = new SourceCache({ maxTtlMs: 60_000, maxBytes: 1_000 });
    cache.put('a', 1, image(10), 0);
    cache.put('b', 1, image(300), 60_000);
    cache.put('c', 1, image(10), 60_000);
    expect(['a', 'b', 'c'].map((key) => cache.get(key) !== undefined)).toEqual([false, false, true]);
  });
});
