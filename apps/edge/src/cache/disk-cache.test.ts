import { mkdirSync, mkdtempSync, readdirSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DiskCache, type DiskCacheOptions, type VariantMeta } from './disk-cache.ts';

const meta = (url: string): VariantMeta => ({
  url,
  contentType: 'image/jpeg',
  etag: '"x"',
  varyAccept: false,
  freshUntil: Date.now() + 60_000,
});

async function openCache(dir: string, options: Partial<DiskCacheOptions> = {}): Promise<DiskCache> {
  const cache = new DiskCache({ dir, maxBytes: 1e6, maxEntries: 1_000, memoryBytes: 1e5, ...options });
  await cache.init();
  return cache;
}

const newDir = () => mkdtempSync(join(tmpdir(), 'ukiyo-cache-'));
const text = async (cache: DiskCache, id: string) => (await cache.load(id))?.data.toString();

describe('DiskCache', () => {
  it('keeps no torn or foreign file: abandoned temporary files, the old two-file layout, bad headers', async () => {
    const dir = newDir();
    const cache = await openCache(dir);
    const whole = DiskCache.idOf(3, '/a.jpg', 'whole');
    await cache.put(whole, meta('whole'), Buffer.from('whole'));
    const directory = join(dir, whole.slice(0, whole.lastIndexOf('/')));
    // A write cut short long ago, and one still in progress (another worker's).
    writeFileSync(join(directory, '.tmp-abandoned'), 'partial');
    utimesSync(join(directory, '.tmp-abandoned'), new Date(0), new Date(0));
    // A young one of a process that is gone (a killed edge), and one of a live process.
    writeFileSync(join(directory, '.tmp-999999999-cut'), 'partial');
    writeFileSync(join(directory, `.tmp-${process.pid}-writing`), 'partial');
    // The earlier layout: data with its meta beside it.
    const old = DiskCache.idOf(3, '/a.jpg', 'old');
    writeFileSync(join(dir, old), 'old bytes');
    writeFileSync(join(dir, `${old}.json`), JSON.stringify(meta('old')));

    const reopened = await openCache(dir);
    expect(readdirSync(directory).sort()).toEqual(
      [`.tmp-${process.pid}-writing`, old.split('/')[2], whole.split('/')[2]].sort(),
    );
    expect(await text(reopened, whole)).toBe('whole');
    expect(await text(reopened, old)).toBeUndefined();
    expect(readdirSync(directory).sort()).toEqual(
      [`.tmp-${process.pid}-writing`, whole.split('/')[2]].sort(),
    );
    expect(await reopened.urlsOf(3, '/a.jpg')).toEqual(['whole']);
  });

  it('leaves no temporary file behind a write that failed', async () => {
    const dir = newDir();
    const cache = await openCache(dir);
    const id = DiskCache.idOf(4, '/a.jpg', 'w=1');
    // A directory where the variant's file goes: the rename into place fails.
    mkdirSync(join(dir, id), { recursive: true });
    await expect(cache.put(id, meta('u'), Buffer.from('bytes'))).rejects.toThrow();
    expect(readdirSync(join(dir, id.slice(0, id.lastIndexOf('/'))))).toEqual([id.split('/')[2]]);
  });

  it('survives a restart, reading metas when asked, groups variants by image and purges them together', async () => {
    const dir = newDir();
    const cache = await openCache(dir);
    await cache.put(DiskCache.idOf(1, '/a.jpg', 'w=1'), meta('u1'), Buffer.from('one'));
    await cache.put(DiskCache.idOf(1, '/a.jpg', 'w=2'), meta('u2'), Buffer.from('two'));
    await cache.put(DiskCache.idOf(1, '/b.jpg', 'w=1'), meta('u3'), Buffer.from('three'));

    const reopened = await openCache(dir);
    expect(reopened.size.entries).toBe(3);
    // Nothing in memory until asked; then from disk, then held.
    expect(reopened.hotVariant(DiskCache.idOf(1, '/a.jpg', 'w=2'))).toBeUndefined();
    expect(await text(reopened, DiskCache.idOf(1, '/a.jpg', 'w=2'))).toBe('two');
    expect(reopened.hotVariant(DiskCache.idOf(1, '/a.jpg', 'w=2'))?.meta.contentType).toBe('image/jpeg');
    expect(await reopened.purge(1, '/a.jpg')).toEqual(['u1', 'u2']);
    expect(reopened.hotVariant(DiskCache.idOf(1, '/a.jpg', 'w=2'))).toBeUndefined();
    expect(await reopened.urlsOf(1, '/b.jpg')).toEqual(['u3']);
    expect(readdirSync(join(dir, '1'))).toHaveLength(1);
  });

  it('is shared by processes: one finds what another wrote, and a file another evicted is a miss', async () => {
    const dir = newDir();
    const [first, second] = [await openCache(dir), await openCache(dir)];
    const id = DiskCache.idOf(4, '/s.jpg', 'w=1');
    await first.put(id, meta('shared'), Buffer.from('made once'));
    expect(await text(second, id)).toBe('made once');
    // Rewritten by the first: the second reads whole new bytes once its memory copy is gone.
    unlinkSync(join(dir, id));
    await first.purge(4, '/s.jpg');
    expect(await text(first, id)).toBeUndefined();
    await second.purge(4, '/s.jpg');
    expect(await text(second, id)).toBeUndefined();
  });

  it('holds in memory a copy of exactly the variant, never the larger block it came in', async () => {
    const cache = await openCache(newDir());
    const block = Buffer.alloc(64 * 1024, 7);
    const id = DiskCache.idOf(5, '/m.jpg', 'w=1');
    await cache.put(id, meta('m'), block.subarray(0, 100));
    const held = cache.hotVariant(id)!;
    expect(held.data.equals(Buffer.alloc(100, 7))).toBe(true);
    expect(held.data.buffer.byteLength).toBe(100);
  });

  it('holds a large variant in memory from its first hit, not from its miss, and writes it whole', async () => {
    const dir = newDir();
    const cache = await openCache(dir, { maxBytes: 1e7, memoryBytes: 4 * 1024 ** 2 });
    const large = Buffer.alloc(200_000, 9);
    const id = DiskCache.idOf(5, '/l.png', 'w=1');
    await cache.put(id, meta('l'), large);
    expect(cache.hotVariant(id)).toBeUndefined();
    expect(cache.size.memoryBytes).toBe(0);
    const hit = await cache.load(id);
    expect(hit!.data.equals(large)).toBe(true);
    expect(cache.hotVariant(id)!.data).toBe(hit!.data);
    expect(cache.size.memoryBytes).toBe(200_000);
    // Another worker reads the same bytes from the file.
    expect((await (await openCache(dir)).load(id))!.data.equals(large)).toBe(true);
    await cache.purge(5, '/l.png');
    expect(cache.size.memoryBytes).toBe(0);
  });

  it('evicts by a clock past its entry count or size: a used entry gets a second chance', async () => {
    const ids = ['a', 'b', 'c'].map((key) => DiskCache.idOf(2, '/x.jpg', key));
    const fill = async (cache: DiskCache) => {
      await cache.put(ids[0]!, meta('a'), Buffer.alloc(400));
      await cache.put(ids[1]!, meta('b'), Buffer.alloc(400));
      cache.hotVariant(ids[0]!);
      await cache.put(ids[2]!, meta('c'), Buffer.alloc(400));
    };
    const byCount = await openCache(newDir(), { maxEntries: 2 });
    await fill(byCount);
    expect(await byCount.urlsOf(2, '/x.jpg')).toEqual(['a', 'c']);
    // Three files of 400 bytes and a header (about 120) each do not fit in 1,200 bytes; two do.
    const bySize = await openCache(newDir(), { maxBytes: 1_200 });
    await fill(bySize);
    expect(await bySize.urlsOf(2, '/x.jpg')).toEqual(['a', 'c']);
    expect(bySize.size.entries).toBe(2);
  });

  it('purges by path prefix: only the images under it, any worker’s, and older files without a path', async () => {
    const dir = newDir();
    const cache = await openCache(dir);
    const stored = async (imagePath: string | undefined, variant: string, originId = 5) => {
      const id = DiskCache.idOf(originId, imagePath ?? '/unknown.jpg', variant);
      await cache.put(
        id,
        { ...meta(`${imagePath}?${variant}`), ...(imagePath ? { imagePath } : {}) },
        Buffer.from(variant),
      );
      return id;
    };
    const inside = [await stored('/photos/a.jpg', 'w=1'), await stored('/photos/a.jpg', 'w=2')];
    const nested = await stored('/photos/2024/b.jpg', 'w=1');
    const outside = await stored('/photo.jpg', 'w=1');
    const older = await stored(undefined, 'w=1');
    const otherOrigin = await stored('/photos/a.jpg', 'w=1', 6);
    // Another worker's view: it indexed none of them, yet purges them from disk; this one,
    // applying the same purge after it, forgets what it held in memory.
    const worker = await openCache(dir);
    expect(await worker.purgePrefix(5, '/photos/')).toBe(3);
    expect(await cache.purgePrefix(5, '/photos/')).toBe(0);
    for (const id of [...inside, nested, older]) {
      expect(await text(worker, id)).toBeUndefined();
      expect(await text(cache, id)).toBeUndefined();
    }
    expect(await text(cache, outside)).toBe('w=1');
    expect(await text(cache, otherOrigin)).toBe('w=1');
    // A prefix without its slash matches the same paths.
    expect(await cache.purgePrefix(5, 'photo')).toBe(1);
    expect(await cache.purgeOrigin(6)).toBe(1);
    expect(cache.size.entries).toBe(0);
  });
});
