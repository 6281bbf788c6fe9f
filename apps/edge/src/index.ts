import { createServer, type Server } from 'node:http';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { DiskCache } from './cache/disk-cache.ts';
import { FanOut } from './fanout.ts';
import { Metering } from './metering.ts';
import { HttpFetcher } from './origins/http.ts';
import { OriginRegistry } from './origins/registry.ts';
import { S3Fetcher } from './origins/s3.ts';
import { EdgeHandler } from './server.ts';
import type { EdgeDeps } from './types.ts';

export type { EdgeDeps } from './types.ts';

export interface EdgeOptions {
  /** Default `{DATA_DIR}/edge-cache`. */
  cacheDir: string;
  cacheMaxBytes: number;
  /** Hot variants also kept in memory, for the hit path. */
  memoryCacheBytes: number;
  originTimeoutMs: number;
  maxInputBytes: number;
  /** Decompression-bomb guard, from the image header before decoding. */
  maxInputPixels: number;
  maxOutputPixels: number;
  transformConcurrency: number;
  /** How often the origins table is checked for changes. */
  originPollMs: number;
  /** How often usage counters are written; the console sees them within this. */
  meteringFlushMs: number;
}

export interface Edge {
  /** Not yet listening. */
  server: Server;
  /** Removes every cached variant of one image URL (or origin path); returns their URLs. */
  purge(originId: number, imageUrlOrPath: string): Promise<string[]>;
  /** The cached variants of one image URL (or origin path). */
  lookup(originId: number, imageUrlOrPath: string): Promise<string[]>;
  /** Loads origin changes now rather than at the next poll. */
  refreshOrigins(): Promise<void>;
  /** Writes pending usage now. */
  flushUsage(): Promise<void>;
  close(): Promise<void>;
}

const DEFAULTS: Omit<EdgeOptions, 'cacheDir'> = {
  cacheMaxBytes: 2 * 1024 ** 3,
  memoryCacheBytes: 64 * 1024 ** 2,
  originTimeoutMs: 10_000,
  maxInputBytes: 50 * 1024 ** 2,
  maxInputPixels: 100_000_000,
  maxOutputPixels: 50_000_000,
  transformConcurrency: availableParallelism(),
  originPollMs: 1_000,
  meteringFlushMs: 2_000,
};

export async function createEdge(deps: EdgeDeps, overrides: Partial<EdgeOptions> = {}): Promise<Edge> {
  const options: EdgeOptions = {
    cacheDir: join(deps.config.DATA_DIR, 'edge-cache'),
    ...DEFAULTS,
    ...overrides,
  };
  const log = deps.log.child({ app: 'edge' });
  const cache = new DiskCache({
    dir: options.cacheDir,
    maxBytes: options.cacheMaxBytes,
    memoryBytes: options.memoryCacheBytes,
  });
  await cache.init();
  const limits = { timeoutMs: options.originTimeoutMs, maxBytes: options.maxInputBytes };
  const http = new HttpFetcher(deps.config.ALLOW_PRIVATE_ORIGINS, limits);
  const s3 = new S3Fetcher(deps.config.ALLOW_PRIVATE_ORIGINS, limits);
  const metering = new Metering(deps.db, log);
  let fanOut: FanOut | undefined;
  const registry = new OriginRegistry(deps.db, deps.secrets, log, {
    removed: (originId) => {
      cache.purgeOrigin(originId).catch((error: unknown) => log.warn({ err: error }, 'cache purge failed'));
    },
    changed: () => {
      fanOut?.publishOriginsChanged().catch((error: unknown) => log.warn({ err: error }, 'fan-out failed'));
    },
  });
  const handler = new EdgeHandler({
    registry,
    cache,
    http,
    s3,
    metering,
    log,
    trustProxy: deps.config.TRUST_PROXY,
    limits: {
      maxInputPixels: options.maxInputPixels,
      maxOutputPixels: options.maxOutputPixels,
      transformConcurrency: options.transformConcurrency,
    },
  });
  if (deps.config.REDIS_URL) {
    fanOut = new FanOut(
      deps.config.REDIS_URL,
      {
        purge: (originId, imagePath) => cache.purge(originId, imagePath),
        originsChanged: () => registry.refresh(),
      },
      log,
    );
    await fanOut.start();
  }
  await registry.start(options.originPollMs);
  metering.start(options.meteringFlushMs);
  const server = createServer({ keepAliveTimeout: 65_000 }, handler.listener);

  const variants = async (originId: number, url: string, remove: boolean) => {
    const found = await handler.variantUrls(originId, url, remove);
    if (found && remove) await fanOut?.publishPurge(originId, found.imagePath);
    return found?.urls ?? [];
  };
  return {
    server,
    purge: (originId, url) => variants(originId, url, true),
    lookup: (originId, url) => variants(originId, url, false),
    refreshOrigins: () => registry.refresh(),
    flushUsage: () => metering.flush(),
    async close() {
      registry.stop();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await metering.stop();
      http.close();
      s3.close();
      await fanOut?.close();
    },
  };
}
