import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** What a stored variant needs to be answered without touching the origin. */
export interface VariantMeta {
  /** The request URL the variant was first produced for (canonical parameters). */
  url: string;
  contentType: string;
  etag: string;
  varyAccept: boolean;
  /** Epoch ms until which the variant may be served without asking the origin. */
  freshUntil: number;
}

/** The meta as written next to the data. */
type StoredMeta = VariantMeta & { size?: number };

export interface CacheEntry extends VariantMeta {
  id: string;
  size: number;
  /** Kept in memory while the entry is among the most recently used. */
  data?: Buffer;
}

export interface DiskCacheOptions {
  dir: string;
  /** Bytes on disk; least recently used variants are evicted past it. */
  maxBytes: number;
  /** Bytes of variant data also held in memory for the hit path. */
  memoryBytes: number;
}

export function digest(value: string): string {
  return createHash('sha256').update(value).digest('hex').slice(0, 32);
}

/**
 * Variants on disk as `{dir}/{originId}/{hash(image path)}/{hash(variant key)}` (data) plus
 * `.json` (meta): every variant of one source image shares a directory, so a purge is one
 * directory removal. Files are written under a temporary name and renamed into place: the old
 * meta removed first, then data, then meta, so a process killed at any point leaves either a
 * whole entry or data without a meta, which start-up deletes (with leftover temporary files),
 * never a meta describing other bytes. The meta records the data's size, checked at start.
 * The index lives in memory (a Map in least-recently-used order) and is rebuilt from the metas.
 */
export class DiskCache {
  private readonly entries = new Map<string, CacheEntry>();
  private readonly hot = new Map<string, CacheEntry>();
  private diskBytes = 0;
  private memoryBytes = 0;

  constructor(private readonly options: DiskCacheOptions) {}

  static idOf(originId: number, imagePath: string, variantKey: string): string {
    return `${originId}/${digest(imagePath)}/${digest(variantKey)}`;
  }

  get size(): { entries: number; bytes: number; memoryBytes: number } {
    return { entries: this.entries.size, bytes: this.diskBytes, memoryBytes: this.memoryBytes };
  }

  async init(): Promise<void> {
    await mkdir(this.options.dir, { recursive: true });
    for (const origin of await readdir(this.options.dir)) {
      for (const image of await readdir(join(this.options.dir, origin)).catch(() => [])) {
        const directory = join(this.options.dir, origin, image);
        const files = await readdir(directory).catch(() => [] as string[]);
        const names = new Set(files);
        for (const file of files) {
          // Leftovers of a write cut short: temporary files, data whose meta never landed.
          if (file.startsWith('.tmp-') || (!file.endsWith('.json') && !names.has(`${file}.json`))) {
            await unlink(join(directory, file)).catch(() => {});
            continue;
          }
          if (!file.endsWith('.json')) continue;
          const id = `${origin}/${image}/${file.slice(0, -5)}`;
          try {
            const meta = JSON.parse(
              await readFile(join(this.options.dir, `${id}.json`), 'utf8'),
            ) as StoredMeta;
            const { size } = await stat(join(this.options.dir, id));
            if (meta.size !== undefined && meta.size !== size) throw new Error('size mismatch');
            delete meta.size;
            this.entries.set(id, { ...meta, id, size });
            this.diskBytes += size;
          } catch {
            await this.remove(id);
          }
        }
      }
    }
    await this.evict();
  }

  /** The entry, marked as recently used. */
  get(id: string): CacheEntry | undefined {
    const entry = this.entries.get(id);
    if (!entry) return undefined;
    this.entries.delete(id);
    this.entries.set(id, entry);
    if (entry.data) {
      this.hot.delete(id);
      this.hot.set(id, entry);
    }
    return entry;
  }

  async read(entry: CacheEntry): Promise<Buffer> {
    if (entry.data) return entry.data;
    const data = await readFile(join(this.options.dir, entry.id));
    if (this.entries.get(entry.id) === entry) this.keepHot(entry, data);
    return data;
  }

  async put(id: string, meta: VariantMeta, data: Buffer): Promise<void> {
    const path = join(this.options.dir, id);
    const directory = path.slice(0, path.lastIndexOf('/'));
    await mkdir(directory, { recursive: true });
    const suffix = randomBytes(6).toString('hex');
    const dataTmp = join(directory, `.tmp-${suffix}`);
    const metaTmp = join(directory, `.tmp-${suffix}.json`);
    await writeFile(dataTmp, data);
    await writeFile(metaTmp, JSON.stringify({ ...meta, size: data.length } satisfies StoredMeta));
    // Out of the index first: no reader pairs the old meta with the new bytes meanwhile.
    this.drop(id);
    await unlink(`${path}.json`).catch(() => {});
    await rename(dataTmp, path);
    await rename(metaTmp, `${path}.json`);
    const entry: CacheEntry = { ...meta, id, size: data.length };
    this.entries.set(id, entry);
    this.diskBytes += data.length;
    this.keepHot(entry, data);
    await this.evict();
  }

  /** Every stored variant of one source image. */
  entriesOf(originId: number, imagePath: string): CacheEntry[] {
    const prefix = `${originId}/${digest(imagePath)}/`;
    return [...this.entries.values()].filter((entry) => entry.id.startsWith(prefix));
  }

  /** Removes every variant of one source image; returns their URLs. */
  async purge(originId: number, imagePath: string): Promise<string[]> {
    const directory = `${originId}/${digest(imagePath)}`;
    const urls: string[] = [];
    for (const entry of this.entriesOf(originId, imagePath)) {
      urls.push(entry.url);
      this.drop(entry.id);
    }
    await rm(join(this.options.dir, directory), { recursive: true, force: true });
    return urls.sort();
  }

  /** Removes every variant of an origin (deleted origin). */
  async purgeOrigin(originId: number): Promise<void> {
    for (const entry of [...this.entries.values()])
      if (entry.id.startsWith(`${originId}/`)) this.drop(entry.id);
    await rm(join(this.options.dir, String(originId)), { recursive: true, force: true });
  }

  private keepHot(entry: CacheEntry, data: Buffer): void {
    if (data.length > this.options.memoryBytes / 8) return;
    entry.data = data;
    this.hot.set(entry.id, entry);
    this.memoryBytes += data.length;
    for (const [id, cold] of this.hot) {
      if (this.memoryBytes <= this.options.memoryBytes) break;
      this.hot.delete(id);
      this.memoryBytes -= cold.data?.length ?? 0;
      delete cold.data;
    }
  }

  private drop(id: string): void {
    const entry = this.entries.get(id);
    if (!entry) return;
    this.entries.delete(id);
    this.diskBytes -= entry.size;
    if (this.hot.delete(id)) this.memoryBytes -= entry.data?.length ?? 0;
    delete entry.data;
  }

  private async evict(): Promise<void> {
    for (const id of this.entries.keys()) {
      if (this.diskBytes <= this.options.maxBytes) break;
      await this.remove(id);
    }
  }

  private async remove(id: string): Promise<void> {
    this.drop(id);
    const path = join(this.options.dir, id);
    await Promise.all([unlink(path).catch(() => {}), unlink(`${path}.json`).catch(() => {})]);
  }
}
