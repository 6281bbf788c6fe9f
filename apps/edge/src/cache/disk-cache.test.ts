import { mkdtempSync, readdirSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DiskCache, type VariantMeta } from './disk-cache.ts';

const meta = (url: string): VariantMeta => ({
  url,
  contentType: 'image/jpeg',
  etag: '"x"',
  varyAccept: false,
  freshUntil: Date.now() + 60_000,
});

describe('DiskCache', () => {
  it('keeps no torn entry when a write was cut at any step (killed process)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ukiyo-cache-'));
    const cache = new DiskCache({ dir, maxBytes: 1e6, memoryBytes: 1e5 });
    await cache.init();
    const whole = DiskCache.idOf(3, '/a.jpg', 'whole');
    const dataOnly = DiskCache.idOf(3, '/a.jpg', 'data-only');
    const rewritten = DiskCache.idOf(3, '/a.jpg', 'rewritten');
    await cache.put(whole, meta('whole'), Buffer.from('whole'));
    await cache.put(rewritten, meta('old'), Buffer.from('old bytes'));
    // What put() leaves when killed between its steps: a temporary file, data whose meta
    // was never renamed into place (first write, or a rewrite whose old meta was removed),
    // and, as a defence, a meta whose recorded size does not match its data.
    const directory = join(dir, whole.slice(0, whole.lastIndexOf('/')));
    writeFileSync(join(directory, '.tmp-cut'), 'partial');
    writeFileSync(join(dir, dataOnly), 'no meta');
    unlinkSync(join(dir, `${rewritten}.json`));
    writeFileSync(join(dir, `${rewritten}.tmp`), 'new bytes, longer');
    renameSync(join(dir, `${rewritten}.tmp`), join(dir, rewritten));
    const sizeLie = DiskCache.idOf(3, '/a.jpg', 'size-lie');
    writeFileSync(join(dir, sizeLie), 'short');
    writeFileSync(join(dir, `${sizeLie}.json`), JSON.stringify({ ...meta('lie'), size: 999 }));

    const reopened = new DiskCache({ dir, maxBytes: 1e6, memoryBytes: 1e5 });
    await reopened.init();
    expect(reopened.entriesOf(3, '/a.jpg').map((entry) => entry.url)).toEqual(['whole']);
    expect(readdirSync(directory).sort()).toEqual(
      [whole.split('/')[2], `${whole.split('/')[2]}.json`].sort(),
    );
  });

  it('survives a restart, groups variants by image and purges them together', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ukiyo-cache-'));
    const cache = new DiskCache({ dir, maxBytes: 1e6, memoryBytes: 1e5 });
    await cache.init();
    await cache.put(DiskCache.idOf(1, '/a.jpg', 'w=1'), meta('u1'), Buffer.from('one'));
    await cache.put(DiskCache.idOf(1, '/a.jpg', 'w=2'), meta('u2'), Buffer.from('two'));
    await cache.put(DiskCache.idOf(1, '/b.jpg', 'w=1'), meta('u3'), Buffer.from('three'));

    const reopened = new DiskCache({ dir, maxBytes: 1e6, memoryBytes: 1e5 });
    await reopened.init();
    expect(reopened.size).toMatchObject({ entries: 3, bytes: 11 });
    const entry = reopened.get(DiskCache.idOf(1, '/a.jpg', 'w=2'))!;
    expect((await reopened.read(entry)).toString()).toBe('two');
    expect(await reopened.purge(1, '/a.jpg')).toEqual(['u1', 'u2']);
    expect(reopened.entriesOf(1, '/b.jpg').map((e) => e.url)).toEqual(['u3']);
    expect(readdirSync(join(dir, '1'))).toHaveLength(1);
  });

  it('evicts the least recently used past its size and drops leftover temporary files', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ukiyo-cache-'));
    const cache = new DiskCache({ dir, maxBytes: 10, memoryBytes: 0 });
    await cache.init();
    const ids = ['a', 'b', 'c'].map((key) => DiskCache.idOf(2, '/x.jpg', key));
    await cache.put(ids[0]!, meta('a'), Buffer.alloc(4));
    await cache.put(ids[1]!, meta('b'), Buffer.alloc(4));
    cache.get(ids[0]!);
    await cache.put(ids[2]!, meta('c'), Buffer.alloc(4));
    expect(
      cache
        .entriesOf(2, '/x.jpg')
        .map((e) => e.url)
        .sort(),
    ).toEqual(['a', 'c']);
    expect(cache.size.bytes).toBe(8);
  });
});
