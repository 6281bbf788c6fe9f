import { describe, expect, it } from 'vitest';
import { SourceCache } from './source-cache.ts';

const image = (bytes: number) => ({ data: Buffer.alloc(bytes), cacheControl: null, expires: null });

describe('SourceCache', () => {
  it('keeps an original asked for again for the shorter of its own time to live and the cache’s', () => {
    const clock = { now: 0 };
    const cache = new SourceCache({ maxTtlMs: 5_000, probationMs: 1_000, maxBytes: 1_000 }, () => clock.now);
    cache.put('a', 1, image(10), 60_000);
    cache.put('b', 1, image(10), 2_000);
    clock.now = 999;
    expect(cache.get('a')).toBeDefined();
    expect(cache.get('b')).toBeDefined();
    clock.now = 1_999;
    expect(cache.get('b')).toBeDefined();
    clock.now = 4_999;
    expect(cache.get('a')?.data.length).toBe(10);
    expect(cache.get('b')).toBeUndefined();
    clock.now = 5_000;
    expect(cache.get('a')).toBeUndefined();
  });

  it('lets an original asked for once go after its probation, with room to spare', () => {
    const clock = { now: 0 };
    const cache = new SourceCache({ maxTtlMs: 10_000, probationMs: 1_000, maxBytes: 1_000 }, () => clock.now);
    cache.put('once', 1, image(100), 60_000);
    cache.put('twice', 1, image(100), 60_000);
    expect(cache.get('twice')).toBeDefined();
    clock.now = 1_000;
    cache.put('next', 1, image(10), 60_000);
    // Its bytes went with it when the next original came, not once the cache was full.
    expect(cache.heldBytes).toBe(110);
    expect(cache.get('once')).toBeUndefined();
    expect(cache.get('twice')).toBeDefined();
    clock.now = 10_000;
    cache.put('last', 1, image(10), 60_000);
    expect(cache.heldBytes).toBe(10);
  });

  it('drops originals on probation first beyond its size, then the oldest kept, and everything of a purged origin', () => {
    const cache = new SourceCache({ maxTtlMs: 60_000, probationMs: 60_000, maxBytes: 1_000 });
    for (const [key, origin, bytes] of [
      ['a', 1, 200],
      ['b', 1, 200],
      ['c', 2, 200],
      ['d', 2, 200],
    ] as const) {
      cache.put(key, origin, image(bytes), 60_000);
    }
    // a and c asked for again: kept; b and d still on probation.
    expect(cache.get('a')).toBeDefined();
    expect(cache.get('c')).toBeDefined();
    cache.put('e', 2, image(250), 60_000);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('d')).toBeDefined();
    // d is kept now (asked again), so e alone is on probation when f comes.
    cache.put('f', 1, image(250), 60_000);
    expect(cache.get('e')).toBeUndefined();
    // With f kept too, nothing is on probation when g comes: the oldest kept, a, makes room.
    expect(cache.get('f')).toBeDefined();
    cache.put('g', 1, image(250), 60_000);
    expect(cache.get('a')).toBeUndefined();
    expect(['c', 'd', 'f', 'g'].every((key) => cache.get(key) !== undefined)).toBe(true);
    expect(cache.heldBytes).toBe(900);
    cache.forgetOrigin(2);
    expect(cache.get('c')).toBeUndefined();
    expect(cache.get('g')).toBeDefined();
    expect(cache.heldBytes).toBe(500);
  });

  it('keeps nothing that may not be cached, nor anything too large', () => {
    const cache = new SourceCache({ maxTtlMs: 60_000, probationMs: 2_000, maxBytes: 1_000 });
    cache.put('a', 1, image(10), 0);
    cache.put('b', 1, image(300), 60_000);
    cache.put('c', 1, image(10), 60_000);
    expect(['a', 'b', 'c'].map((key) => cache.get(key) !== undefined)).toEqual([false, false, true]);
  });
});
