import { describe, expect, it } from 'vitest';
import type { Answer } from './answers.ts';
import { PeerCache } from './peer-cache.ts';

function answer(bytes: number, cacheControl?: string, status = 200): Answer {
  return {
    status,
    body: new Uint8Array(bytes),
    headers: cacheControl ? { 'cache-control': cacheControl } : {},
  };
}

/** A fetch that answers when told, counting its calls. */
function deferred(result: Answer) {
  let calls = 0;
  let release: () => void = () => {};
  const fetchAnswer = () => {
    calls++;
    return new Promise<Answer>((resolve) => (release = () => resolve(result)));
  };
  return { fetchAnswer, release: () => release(), calls: () => calls };
}

describe('PeerCache', () => {
  it('makes one fetch for requests that ask while it is under way', async () => {
    const cache = new PeerCache(1_000);
    const part = answer(10, 'public, max-age=86400, immutable');
    const upstream = deferred(part);
    const waiting = Array.from({ length: 50 }, () => cache.get('/0/part7.m4s', upstream.fetchAnswer));
    upstream.release();
    expect(await Promise.all(waiting)).toEqual(Array(50).fill(part));
    expect(upstream.calls()).toBe(1);
  });

  it('keeps a 200 for its max-age, then fetches again', async () => {
    let now = 0;
    const cache = new PeerCache(1_000, () => now);
    let calls = 0;
    const fetchAnswer = async () => (calls++, answer(10, 'public, max-age=1'));
    await cache.get('/0/index.m3u8', fetchAnswer);
    now = 999;
    await cache.get('/0/index.m3u8', fetchAnswer);
    expect(calls).toBe(1);
    now = 1_000;
    await cache.get('/0/index.m3u8', fetchAnswer);
    expect(calls).toBe(2);
    expect(cache.size).toBe(10);
  });

  it('keeps no error, nothing without max-age, and nothing larger than the whole cache', async () => {
    const cache = new PeerCache(100);
    for (const [key, kept] of [
      ['refused', answer(10, 'public, max-age=60', 503)],
      ['no max-age', answer(10, 'no-store')],
      ['no header', answer(10)],
      ['too large', answer(101, 'public, max-age=60')],
    ] as const) {
      let calls = 0;
      await cache.get(key, async () => (calls++, kept));
      await cache.get(key, async () => (calls++, kept));
      expect(calls, key).toBe(2);
    }
    expect(cache.size).toBe(0);
  });

  it('lets the least recently used go past its bytes', async () => {
    const cache = new PeerCache(30);
    const fetched: string[] = [];
    const get = (key: string) => cache.get(key, async () => (fetched.push(key), answer(10, 'max-age=60')));
    for (const key of ['a', 'b', 'c']) await get(key);
    await get('a');
    await get('d');
    expect(cache.size).toBe(30);
    // b was the least recently used: it went for d, the others are still kept.
    for (const key of ['a', 'c', 'd', 'b']) await get(key);
    expect(fetched).toEqual(['a', 'b', 'c', 'd', 'b']);
  });

  it('lets every waiter see a failed fetch, and tries again for the next request', async () => {
    const cache = new PeerCache(100);
    let calls = 0;
    const failing = async (): Promise<Answer> => {
      calls++;
      throw new Error('peer down');
    };
    await expect(Promise.all([cache.get('x', failing), cache.get('x', failing)])).rejects.toThrow(
      'peer down',
    );
    await expect(cache.get('x', failing)).rejects.toThrow('peer down');
    expect(calls).toBe(2);
  });
});
