import { createHash, randomBytes } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, rm, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { OriginValidators } from '../origins/errors.ts';

/** What a stored variant needs to be answered without touching the origin. */
export interface VariantMeta {
  /** The request URL the variant was first produced for (canonical parameters). */
  url: string;
  contentType: string;
  etag: string;
  varyAccept: boolean;
  /** Epoch ms until which the variant may be served without asking the origin. */
  freshUntil: number;
  /**
   * Epoch ms until which a stale copy may be served while the origin fails (its
   * `stale-if-error`); absent, for as long as the copy is kept.
   */
  staleUntil?: number;
  /** The original's bytes (absent for variants stored before analytics counted it). */
  sourceBytes?: number;
  /**
   * The source image's path on the origin, which the file's directory is a hash of: what a
   * purge by path prefix compares (absent in variants stored before; such a variant is purged
   * by any prefix of its origin, as it cannot be told apart).
   */
  imagePath?: string;
  /**
   * The original's version the variant was made from and what the origin said of its freshness
   * then, when the origin named a version: once the variant is stale the edge asks the origin
   * whether the original changed, and an unchanged one makes the variant fresh again.
   */
  revalidation?: Revalidation;
}

export interface Revalidation {
  validators: OriginValidators;
  cacheControl: string | null;
  expires: string | null;
}

/**
 * A variant as the index keeps it: the meta less its URL, path and revalidation, which stay on
 * disk and are read from the file when needed.
 */
export type IndexedMeta = Omit<VariantMeta, 'url' | 'imagePath' | 'revalidation'>;

export function indexedMeta({
  url: _url,
  imagePath: _imagePath,
  revalidation: _revalidation,
  ...indexed
}: VariantMeta): IndexedMeta {
  return indexed;
}

/** Whether a variant of `imagePath` (unknown: an older file) falls under a purge of `pathPrefix`. */
export function underPrefix(imagePath: string | undefined, pathPrefix: string): boolean {
  const slashed = (path: string) => (path.startsWith('/') ? path : `/${path}`);
  return imagePath === undefined || slashed(imagePath).startsWith(slashed(pathPrefix));
}

/** Image directories examined at once by a purge by prefix. */
const SCAN_CONCURRENCY = 16;

export interface CacheEntry {
  id: string;
  /** Bytes of the file: header and data. */
  size: number;
  /** Known once the file was read by this process (a file found at start is read when asked). */
  meta?: IndexedMeta;
  /** Kept in memory while the entry is among the most recently used. */
  data?: Buffer;
  /** Asked for since the eviction clock last passed it (second chance). */
  used: boolean;
  /** The same, for the memory tier. */
  usedHot: boolean;
}

/** An entry whose bytes are in hand. */
export interface CachedVariant {
  entry: CacheEntry;
  meta: IndexedMeta;
  data: Buffer;
}

export interface DiskCacheOptions {
  dir: string;
  /** Bytes on disk; least recently used variants are evicted past it. */
  maxBytes: number;
  /** Variants indexed at most (each costs the index a few hundred bytes of heap). */
  maxEntries: number;
  /** Bytes of variant data also held in memory for the hit path. */
  memoryBytes: number;
}

export function digest(value: string): string {
  return createHash('sha256').update(value).digest('hex').slice(0, 32);
}

/** File layout: MAGIC, the meta's length (uint32 BE), the meta as JSON, then the data. */
const MAGIC = Buffer.from('UKV2');
const HEADER = MAGIC.length + 4;
/** A temporary file this old belongs to no write in progress (a killed process left it). */
const ABANDONED_MS = 60_000;

/**
 * A temporary file names its writer's pid (`.tmp-{pid}-{random}`): one whose writer is gone
 * was cut short, whatever its age; another live process's (a worker sharing the directory,
 * here or, for a volume shared across hosts, a pid that happens to be alive) is left until
 * ABANDONED_MS.
 */
function abandoned(file: string, mtimeMs: number): boolean {
  if (Date.now() - mtimeMs > ABANDONED_MS) return true;
  const pid = Number(/^\.tmp-(\d+)-/.exec(file)?.[1]);
  if (!pid) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/**
 * The pieces of one variant file (a disk cache file, a shared tier object): its head (MAGIC, the
 * meta's length and the meta) and the data itself, which is never copied to write it.
 */
export function encodeVariant(meta: VariantMeta, data: Buffer): [Buffer, Buffer] {
  const json = JSON.stringify(meta);
  const length = Buffer.byteLength(json);
  const head = Buffer.allocUnsafe(HEADER + length);
  MAGIC.copy(head);
  head.writeUInt32BE(length, MAGIC.length);
  head.write(json, HEADER);
  return [head, data];
}

/**
 * The meta of a variant file from its first bytes (the whole file, or only its head), and where
 * its data starts; null when the head is not one (torn, foreign, or cut before the meta's end).
 */
export function decodeMeta(head: Buffer): { meta: VariantMeta; dataStart: number } | null {
  if (head.length < HEADER || !head.subarray(0, MAGIC.length).equals(MAGIC)) return null;
  const end = HEADER + head.readUInt32BE(MAGIC.length);
  if (end > head.length) return null;
  try {
    return { meta: JSON.parse(head.toString('utf8', HEADER, end)) as VariantMeta, dataStart: end };
  } catch {
    return null;
  }
}

/** Meta and data of one variant file, or null when it is not one whole (torn, foreign). */
export function decodeVariant(file: Buffer): { meta: VariantMeta; data: Buffer } | null {
  const decoded = decodeMeta(file);
  return decoded && { meta: decoded.meta, data: file.subarray(decoded.dataStart) };
}

/** Runs `each` over `items`, `concurrency` at a time. */
export async function inBatches<T>(
  items: readonly T[],
  concurrency: number,
  each: (item: T) => Promise<void>,
): Promise<void> {
  for (let start = 0; start < items.length; start += concurrency)
    await Promise.all(items.slice(start, start + concurrency).map(each));
}

/**
 * Variants on disk as `{dir}/{originId}/{hash(image path)}/{hash(variant key)}`, one file each
 * (header with the meta, then the data), written under a temporary name and renamed into
 * place: a reader, in this process or another, sees a whole old file or a whole new one. Every
 * variant of one source image shares a directory, so a purge is one directory removal.
 *
 * Several processes (the edge's workers) may share the directory. Each keeps its own index
 * (id to size and meta) and its own memory tier; a variant one process wrote is found by the
 * others on disk when their index has not seen it, and a file another process evicted is a
 * miss. Each process evicts within its own view, so all stay within the limit together.
 *
 * Recency is kept with a clock (second chance): a hit only sets a flag, and eviction moves
 * flagged entries to the back instead of removing them. Start-up indexes names and sizes
 * only; a meta is read with its first request.
 */
export class DiskCache {
  private readonly entries = new Map<string, CacheEntry>();
  private readonly hot = new Map<string, CacheEntry>();
  private diskBytes = 0;
  private memoryBytes = 0;
  /** Temporary names: this process's pid, a random part (hosts sharing a volume), a counter. */
  private readonly temporaryPrefix = `.tmp-${process.pid}-${randomBytes(6).toString('hex')}-`;
  private writes = 0;

  constructor(private readonly options: DiskCacheOptions) {}

  static idOf(originId: number, imagePath: string, variantKey: string): string {
    return `${originId}/${digest(imagePath)}/${digest(variantKey)}`;
  }

  get size(): { entries: number; bytes: number; memoryBytes: number } {
    return { entries: this.entries.size, bytes: this.diskBytes, memoryBytes: this.memoryBytes };
  }

  async init(): Promise<void> {
    await mkdir(this.options.dir, { recursive: true });
    const found: Array<{ id: string; size: number; mtimeMs: number }> = [];
    for (const origin of await readdir(this.options.dir)) {
      for (const image of await readdir(join(this.options.dir, origin)).catch(() => [])) {
        const directory = join(this.options.dir, origin, image);
        for (const file of await readdir(directory).catch(() => [] as string[])) {
          const path = join(directory, file);
          const info = await stat(path).catch(() => null);
          if (!info) continue;
          // Leftovers of a write cut short, and the meta files of the earlier two-file layout
          // (their data files fail the header check when read, and are removed then).
          const leftover = file.startsWith('.tmp-') && abandoned(file, info.mtimeMs);
          if (leftover || file.endsWith('.json')) await unlink(path).catch(() => {});
          else if (!file.startsWith('.tmp-'))
            found.push({ id: `${origin}/${image}/${file}`, size: info.size, mtimeMs: info.mtimeMs });
        }
      }
    }
    // Oldest first: the eviction clock starts with them.
    for (const { id, size } of found.sort((a, b) => a.mtimeMs - b.mtimeMs)) this.index(id, size);
    await this.evict();
  }

  /** A fresh or stale variant held in memory, marked as used: the hit path's synchronous answer. */
  hotVariant(id: string): CachedVariant | undefined {
    const entry = this.entries.get(id);
    if (!entry?.data || !entry.meta) return undefined;
    entry.used = true;
    entry.usedHot = true;
    return { entry, meta: entry.meta, data: entry.data };
  }

  /**
   * The variant from memory or disk, marked as used; from disk also when this process has not
   * indexed it (another worker wrote it). Undefined when there is none, or its file is gone.
   */
  async load(id: string): Promise<CachedVariant | undefined> {
    const held = this.hotVariant(id);
    if (held) return held;
    const file = await readFile(join(this.options.dir, id)).catch(() => null);
    if (!file) {
      this.drop(id);
      return undefined;
    }
    const decoded = decodeVariant(file);
    if (!decoded) {
      await this.remove(id);
      return undefined;
    }
    const meta = indexedMeta(decoded.meta);
    const entry = this.entries.get(id) ?? this.index(id, file.length);
    entry.meta = meta;
    entry.used = true;
    this.keepHot(entry, decoded.data);
    await this.evict();
    return { entry, meta, data: decoded.data };
  }

  /**
   * Writes the variant under a temporary name, renames it into place, then indexes it and keeps
   * it in memory if it is small. A miss waits for it: its answer then stands for a file every
   * worker finds.
   */
  async put(id: string, meta: VariantMeta, data: Buffer): Promise<void> {
    const path = join(this.options.dir, id);
    const directory = path.slice(0, path.lastIndexOf('/'));
    const temporary = join(directory, `${this.temporaryPrefix}${this.writes++}`);
    const [head] = encodeVariant(meta, data);
    // The image's directory usually exists (its other variants): created only when it does not.
    const file = await open(temporary, 'w').catch(async (error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
      await mkdir(directory, { recursive: true });
      return open(temporary, 'w');
    });
    try {
      try {
        // One write of both pieces.
        const { bytesWritten } = await file.writev([head, data]);
        if (bytesWritten !== head.length + data.length)
          throw new Error(`short write to ${temporary}: ${bytesWritten} bytes`);
      } finally {
        await file.close();
      }
      await rename(temporary, path);
    } catch (error) {
      // A write that failed (a full disk) leaves nothing behind: start-up would keep a live
      // process's temporary file.
      await unlink(temporary).catch(() => {});
      throw error;
    }
    this.drop(id);
    const entry = this.index(id, head.length + data.length);
    entry.meta = indexedMeta(meta);
    // A large variant held from its miss would outlive the answer into V8's old generation,
    // whose external memory only a major GC frees: a few dozen MB of such set one off, marking
    // the edge's whole heap (bench/edge.ts, 6 MP to PNG: 1.05x sharp's CPU held so, 1.01 with
    // the tier off). From HELD_ON_HIT_BYTES on (glibc's threshold for mapping a block afresh,
    // past which a copy's page faults cost more too) it waits for its first hit, which reads
    // its file.
    if (data.length < HELD_ON_HIT_BYTES) this.keepHot(entry, exactCopy(data));
    await this.evict();
  }

  /**
   * How to ask the origin whether a stored variant's original changed, from its file: read only
   * for a stale variant, so the index need not hold it for every one.
   */
  async revalidationOf(id: string): Promise<Revalidation | undefined> {
    return (await readMeta(join(this.options.dir, id)))?.revalidation;
  }

  /** The URLs of every stored variant of one source image, from the files (any worker's). */
  async urlsOf(originId: number, imagePath: string): Promise<string[]> {
    const directory = join(this.options.dir, String(originId), digest(imagePath));
    const files = (await readdir(directory).catch(() => [] as string[])).filter(
      (f) => !f.startsWith('.tmp-'),
    );
    const metas = await Promise.all(files.map((file) => readMeta(join(directory, file))));
    return metas.flatMap((meta) => (meta ? [meta.url] : [])).sort();
  }

  /** Removes every variant of one source image; returns their URLs. */
  async purge(originId: number, imagePath: string): Promise<string[]> {
    const urls = await this.urlsOf(originId, imagePath);
    this.dropPrefix(`${originId}/${digest(imagePath)}/`);
    await rm(join(this.options.dir, String(originId), digest(imagePath)), { recursive: true, force: true });
    return urls;
  }

  /** Removes every variant of an origin (deleted origin, or a purge of all of it); returns how many images. */
  async purgeOrigin(originId: number): Promise<number> {
    const originDir = join(this.options.dir, String(originId));
    const images = await readdir(originDir).catch(() => [] as string[]);
    this.dropPrefix(`${originId}/`);
    await rm(originDir, { recursive: true, force: true });
    return images.length;
  }

  /**
   * Removes every variant of the origin's images whose path starts with `pathPrefix`; returns
   * how many images. Directories are hashes of paths, so each cached image of the origin is
   * examined: one directory listing and the head of one of its files (never data), so the
   * cost is bounded by what this edge holds of the origin, whatever the prefix.
   */
  async purgePrefix(originId: number, pathPrefix: string): Promise<number> {
    const originDir = join(this.options.dir, String(originId));
    const images = await readdir(originDir).catch(() => [] as string[]);
    const removed = new Set<string>();
    await inBatches(images, SCAN_CONCURRENCY, async (image) => {
      const directory = join(originDir, image);
      const files = (await readdir(directory).catch(() => [] as string[])).filter(
        (file) => !file.startsWith('.tmp-'),
      );
      if (files.length === 0) return;
      const meta = await readMeta(join(directory, files[0]!));
      if (!underPrefix(meta?.imagePath, pathPrefix)) return;
      await rm(directory, { recursive: true, force: true });
      removed.add(image);
    });
    // One pass over the index for all of them, not one per image. An image no longer on disk
    // at all went with another worker's purge of the same prefix: this process forgets it too.
    const onDisk = new Set(images);
    for (const id of [...this.entries.keys()]) {
      const [origin, image = ''] = id.split('/');
      if (origin === String(originId) && (removed.has(image) || !onDisk.has(image))) this.drop(id);
    }
    return removed.size;
  }

  private index(id: string, size: number): CacheEntry {
    const entry: CacheEntry = { id, size, used: false, usedHot: false };
    this.entries.set(id, entry);
    this.diskBytes += size;
    return entry;
  }

  /** Into the memory tier. */
  private keepHot(entry: CacheEntry, data: Buffer): void {
    if (entry.data || data.length > this.options.memoryBytes / 8) return;
    entry.data = data;
    this.hot.set(entry.id, entry);
    this.memoryBytes += data.length;
    for (const [id, cold] of this.hot) {
      if (this.memoryBytes <= this.options.memoryBytes) break;
      this.hot.delete(id);
      if (cold.usedHot) {
        cold.usedHot = false;
        this.hot.set(id, cold);
        continue;
      }
      this.forgetData(cold);
    }
  }

  private forgetData(entry: CacheEntry): void {
    this.memoryBytes -= entry.data?.length ?? 0;
    delete entry.data;
  }

  private dropPrefix(prefix: string): void {
    for (const id of [...this.entries.keys()]) if (id.startsWith(prefix)) this.drop(id);
  }

  private drop(id: string): void {
    const entry = this.entries.get(id);
    if (!entry) return;
    this.entries.delete(id);
    this.diskBytes -= entry.size;
    this.hot.delete(id);
    this.forgetData(entry);
  }

  private async evict(): Promise<void> {
    const over = () => this.diskBytes > this.options.maxBytes || this.entries.size > this.options.maxEntries;
    for (const [id, entry] of this.entries) {
      if (!over()) break;
      if (entry.used) {
        entry.used = false;
        this.entries.delete(id);
        this.entries.set(id, entry);
        continue;
      }
      await this.remove(id);
    }
  }

  private async remove(id: string): Promise<void> {
    this.drop(id);
    await unlink(join(this.options.dir, id)).catch(() => {});
  }
}

/** Variants this large enter the memory tier on their first hit, not when made (put). */
const HELD_ON_HIT_BYTES = 128 * 1024;

/**
 * A copy of a variant just made, for the memory tier: sharp's output sits in the native block
 * libvips grew by doubling as it encoded (a GByteArray), up to twice the variant, ~17 KB more
 * than a small one, which thousands held in memory multiplied (RSS doubled over ten minutes of
 * misses; bench/edge-soak.ts). So it is copied into a block of exactly its bytes, outside
 * Buffer's shared pool (a pooled copy would keep a whole pool slab, 64 KiB on Node 24, alive
 * instead).
 */
function exactCopy(data: Buffer): Buffer {
  const copy = Buffer.allocUnsafeSlow(data.length);
  data.copy(copy);
  return copy;
}

/** The meta recorded in a variant file's header, read without its data. */
async function readMeta(path: string): Promise<VariantMeta | null> {
  const handle = await open(path, 'r').catch(() => null);
  if (!handle) return null;
  try {
    const header = Buffer.alloc(HEADER);
    await handle.read(header, 0, HEADER, 0);
    if (!header.subarray(0, MAGIC.length).equals(MAGIC)) return null;
    const head = Buffer.alloc(HEADER + header.readUInt32BE(MAGIC.length));
    await handle.read(head, 0, head.length, 0);
    return decodeMeta(head)?.meta ?? null;
  } catch {
    return null;
  } finally {
    await handle.close();
  }
}
