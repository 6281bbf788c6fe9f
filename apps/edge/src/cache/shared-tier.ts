import type { S3Client } from '@aws-sdk/client-s3';
import type { Readable } from 'node:stream';
import type { Logger } from 'pino';
import type { EdgeMetrics } from '../metrics.ts';
import { readLimited } from '../origins/errors.ts';
import type { S3Sdk } from '../origins/s3-sdk.ts';
import {
  decodeMeta,
  decodeVariant,
  digest,
  encodeVariant,
  inBatches,
  underPrefix,
  type VariantMeta,
} from './disk-cache.ts';

/** The result cache bucket (RESULT_CACHE_S3_*): operator configuration, never a tenant's. */
export interface SharedTierOptions {
  /** Empty: AWS itself; else an S3-compatible service, addressed path-style. */
  endpoint: string;
  bucket: string;
  region: string;
  /** Empty: the SDK's own credential chain (instance role, environment, profile). */
  accessKeyId: string;
  secretAccessKey: string;
  /** Key prefix inside the bucket, so one bucket can hold several fleets' results. */
  prefix: string;
  /** A lookup that takes longer falls through to transforming. */
  timeoutMs: number;
}

/** Writes, listings and deletions: off the answer's path, so bounded more loosely than lookups. */
const WRITE_TIMEOUT_MS = 10_000;
/** Writes in flight at once; past it a variant is not shared (its own edge still has it). */
const MAX_WRITES = 16;
/** Variants larger than this are not shared: the transform's output limit is far below it. */
const MAX_OBJECT_BYTES = 64 * 1024 ** 2;
/** DeleteObjects takes at most this many keys, as ListObjectsV2 lists. */
const PAGE = 1000;
/** Bytes read of an object to learn its image path: the header and meta, whose URL is at most 4 KiB or so. */
const HEAD_BYTES = 16 * 1024;
/** Images examined at once by a purge by prefix. */
const SCAN_CONCURRENCY = 8;

/**
 * Variants shared by a fleet of edges in one S3-compatible bucket, under the key layout of the
 * disk cache (`{prefix}{originId}/{hash(image path)}/{hash(variant)}`, the same file format with
 * its meta), so what one edge converted another serves for a GET, an edge that lost its volume
 * starts warm, and a purge is a prefix deletion. Lookups are bounded by a short timeout and
 * writes by a count in flight; any failure is a miss or a skipped write, logged and counted,
 * never an error answer.
 */
export class SharedTier {
  private readonly client: S3Client;
  private readonly prefix: string;
  private writing = 0;

  /** `sdk`: from s3Sdk(), loaded only when a shared tier is configured. */
  constructor(
    private readonly sdk: S3Sdk,
    private readonly options: SharedTierOptions,
    private readonly metrics: EdgeMetrics,
    private readonly log: Logger,
  ) {
    this.prefix = options.prefix && !options.prefix.endsWith('/') ? `${options.prefix}/` : options.prefix;
    this.client = new sdk.S3Client({
      region: options.region || 'us-east-1',
      ...(options.endpoint ? { endpoint: options.endpoint, forcePathStyle: true } : {}),
      ...(options.accessKeyId
        ? {
            credentials: {
              accessKeyId: options.accessKeyId,
              secretAccessKey: options.secretAccessKey,
            },
          }
        : {}),
      // The loose bound of writes; a lookup aborts itself at its own, shorter deadline.
      requestHandler: { connectionTimeout: WRITE_TIMEOUT_MS, requestTimeout: WRITE_TIMEOUT_MS },
      // A lookup has no time for a retry; a write that fails is only a variant not shared.
      maxAttempts: 1,
    });
  }

  /** The object key of a disk cache id. */
  keyOf(id: string): string {
    return `${this.prefix}${id}`;
  }

  /** The fresh variant stored under `id`, or undefined (none, expired, unreadable, or not in time). */
  async load(id: string): Promise<{ meta: VariantMeta; data: Buffer } | undefined> {
    const signal = AbortSignal.timeout(this.options.timeoutMs);
    try {
      const output = await this.client.send(
        new this.sdk.GetObjectCommand({ Bucket: this.options.bucket, Key: this.keyOf(id) }),
        { abortSignal: signal },
      );
      const body = output.Body as Readable;
      // The SDK's signal covers the answer's head; the body may still trickle.
      signal.addEventListener('abort', () => body.destroy(new Error('shared tier read timed out')));
      const file = await readLimited(body, MAX_OBJECT_BYTES, 'shared variant', output.ContentLength);
      const decoded = decodeVariant(file);
      if (decoded && decoded.meta.freshUntil > Date.now()) {
        this.metrics.sharedLookups.inc({ result: 'hit' });
        return decoded;
      }
      // An entry past its freshness is as good as none: the edge that asks makes it again.
      this.metrics.sharedLookups.inc({ result: decoded ? 'expired' : 'error' });
      return undefined;
    } catch (error) {
      if (error instanceof this.sdk.S3ServiceException && error.$metadata.httpStatusCode === 404) {
        this.metrics.sharedLookups.inc({ result: 'miss' });
        return undefined;
      }
      const result = signal.aborted ? 'timeout' : 'error';
      this.metrics.sharedLookups.inc({ result });
      this.log.warn({ err: error, key: this.keyOf(id) }, `shared tier lookup failed (${result})`);
      return undefined;
    }
  }

  /** Shares a variant, in the background; a failure is logged and counted only. */
  store(id: string, meta: VariantMeta, data: Buffer): void {
    if (this.writing >= MAX_WRITES) {
      this.metrics.sharedWriteFailures.inc({ reason: 'busy' });
      return;
    }
    this.writing++;
    this.client
      .send(
        new this.sdk.PutObjectCommand({
          Bucket: this.options.bucket,
          Key: this.keyOf(id),
          Body: Buffer.concat(encodeVariant(meta, data)),
          ContentType: 'application/octet-stream',
        }),
        { abortSignal: AbortSignal.timeout(WRITE_TIMEOUT_MS) },
      )
      .catch((error: unknown) => {
        this.metrics.sharedWriteFailures.inc({ reason: 'error' });
        this.log.warn({ err: error, key: this.keyOf(id) }, 'shared tier write failed');
      })
      .finally(() => this.writing--);
  }

  /** Removes every variant of one source image. */
  purge(originId: number, imagePath: string): Promise<void> {
    return this.deletePrefix(`${originId}/${digest(imagePath)}/`);
  }

  /** Removes every variant of an origin (deleted origin, or a purge of all of it). */
  purgeOrigin(originId: number): Promise<void> {
    return this.deletePrefix(`${originId}/`);
  }

  /**
   * Removes every variant of the origin's images whose path starts with `pathPrefix`. Keys are
   * hashes of paths, so the origin's keys are listed (a thousand a request) and the head of one
   * object per image is read (a ranged GET, never the data) to learn its path: the cost is
   * bounded by what the bucket holds of the origin, whatever the prefix.
   */
  async purgePrefix(originId: number, pathPrefix: string): Promise<void> {
    const images = new Map<string, string>();
    await this.eachPage(`${originId}/`, async (keys) => {
      for (const key of keys) {
        const image = key.slice(0, key.lastIndexOf('/') + 1);
        if (!images.has(image)) images.set(image, key);
      }
    });
    await inBatches([...images], SCAN_CONCURRENCY, async ([image, key]) => {
      if (underPrefix(await this.imagePathOf(key), pathPrefix))
        await this.deletePrefix(image.slice(this.prefix.length));
    });
  }

  close(): void {
    this.client.destroy();
  }

  /** The image path in one object's meta; undefined when unknown (an older or unreadable object). */
  private async imagePathOf(key: string): Promise<string | undefined> {
    const output = await this.client.send(
      new this.sdk.GetObjectCommand({
        Bucket: this.options.bucket,
        Key: key,
        Range: `bytes=0-${HEAD_BYTES - 1}`,
      }),
      { abortSignal: AbortSignal.timeout(WRITE_TIMEOUT_MS) },
    );
    const head = await readLimited(
      output.Body as Readable,
      HEAD_BYTES,
      'shared variant head',
      output.ContentLength,
    );
    return decodeMeta(head)?.meta.imagePath;
  }

  /** Calls `each` with every page of the keys under `prefix` (a disk cache id prefix). */
  private async eachPage(prefix: string, each: (keys: string[]) => Promise<void>): Promise<void> {
    let token: string | undefined;
    do {
      const listed = await this.client.send(
        new this.sdk.ListObjectsV2Command({
          Bucket: this.options.bucket,
          Prefix: this.keyOf(prefix),
          MaxKeys: PAGE,
          ContinuationToken: token,
        }),
        { abortSignal: AbortSignal.timeout(WRITE_TIMEOUT_MS) },
      );
      await each((listed.Contents ?? []).flatMap((object) => (object.Key ? [object.Key] : [])));
      token = listed.IsTruncated ? listed.NextContinuationToken : undefined;
    } while (token);
  }

  private deletePrefix(prefix: string): Promise<void> {
    return this.eachPage(prefix, async (keys) => {
      if (keys.length === 0) return;
      const deleted = await this.client.send(
        new this.sdk.DeleteObjectsCommand({
          Bucket: this.options.bucket,
          Delete: { Objects: keys.map((Key) => ({ Key })), Quiet: true },
        }),
        { abortSignal: AbortSignal.timeout(WRITE_TIMEOUT_MS) },
      );
      if (deleted.Errors?.length)
        throw new Error(`shared tier kept ${deleted.Errors.length} objects under ${prefix}`);
    });
  }
}
