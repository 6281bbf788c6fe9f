import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { createServer as createTlsServer, type Server as TlsServer } from 'node:tls';
import { databaseCheck, diskCheck, drainServer, Health, redisCheck } from '@ukiyo/server/runtime';
import type { Registry } from 'prom-client';
import sharp from 'sharp';
import { DiskCache } from './cache/disk-cache.ts';
import { SharedTier, type SharedTierOptions } from './cache/shared-tier.ts';
import { FanOut } from './fanout.ts';
import { HotPathServer } from './hot-socket.ts';
import { Metering } from './metering.ts';
import { EdgeMetrics } from './metrics.ts';
import { HttpFetcher } from './origins/http.ts';
import { OriginRegistry } from './origins/registry.ts';
import { S3Fetcher } from './origins/s3.ts';
import { s3Sdk } from './origins/s3-sdk.ts';
import { EdgeHandler } from './server.ts';
import type { EdgeDeps } from './types.ts';
import { WorkerPriority } from './worker-priority.ts';

export type { EdgeDeps } from './types.ts';
export { CacheRequester, CacheUnreachable, FanOut } from './fanout.ts';
export { checkLiteralHost, guardedAgents } from './origins/ssrf.ts';

export interface EdgeOptions {
  /** Default `{DATA_DIR}/edge-cache`. */
  cacheDir: string;
  /** Default EDGE_CACHE_MAX_MB. */
  cacheMaxBytes: number;
  /** Default EDGE_CACHE_MAX_ENTRIES. */
  cacheMaxEntries: number;
  /** Hot variants also kept in memory, for the hit path; default EDGE_MEMORY_CACHE_MB. */
  memoryCacheBytes: number;
  /** The fleet's shared result cache; default from RESULT_CACHE_S3_* (null: none). */
  sharedTier: SharedTierOptions | null;
  originTimeoutMs: number;
  maxInputBytes: number;
  /** Decompression-bomb guard, from the image header before decoding. */
  maxInputPixels: number;
  maxOutputPixels: number;
  /** Transforms at once (never more than the libuv threads left beside RESERVED_THREADS). */
  transformConcurrency: number;
  /** Transforms waiting for a slot; past it 503. */
  transformQueue: number;
  transformWaitMs: number;
  /** One transform's deadline (0: none); past it 503. */
  transformTimeoutMs: number;
  /** Cost units one transform may take, estimated before decoding (0: no limit); past it 422. */
  transformBudget: number;
  /** Frames an animation may have (EDGE_MAX_FRAMES); more: 422. */
  maxFrames: number;
  /** How often the origins table is checked for changes. */
  originPollMs: number;
  /** How often usage counters are written; the console sees them within this. */
  meteringFlushMs: number;
  /** Readiness fails when the cache's disk has less free space than this. */
  minFreeDiskBytes: number;
  /**
   * Repeated requests answered from memory by the hit path (server.ts); off, every request
   * takes the full path (the tests compare the two).
   */
  hitPath: boolean;
}

export interface Edge {
  /** Not yet listening. */
  server: Server;
  /**
   * HTTPS for custom domains with an uploaded certificate, chosen by SNI; other server names
   * get no certificate at all (the handshake fails). Not yet listening.
   */
  tlsServer: TlsServer;
  /** Removes every cached variant of one image URL (or origin path); returns their URLs. */
  purge(originId: number, imageUrlOrPath: string): Promise<string[]>;
  /** The cached variants of one image URL (or origin path). */
  lookup(originId: number, imageUrlOrPath: string): Promise<string[]>;
  /**
   * Removes every variant of the origin's images whose path starts with `pathPrefix` ('' or
   * '/': all of the origin) from this edge and, over Redis, every other; returns how many
   * images this edge held.
   */
  purgePrefix(originId: number, pathPrefix: string): Promise<number>;
  /** Loads origin changes now rather than at the next poll. */
  refreshOrigins(): Promise<void>;
  /** Writes pending usage now. */
  flushUsage(): Promise<void>;
  /** This edge's Prometheus metrics (merged into the process's /metrics by the entry point). */
  metrics: Registry;
  /** Readiness checks: cache disk (critical), database and Redis (degraded only). */
  health: Health;
  /**
   * Stops accepting requests, lets those in flight finish for up to `graceMs` (default 0: cut
   * at once), then writes pending usage and leaves Redis.
   */
  close(options?: { graceMs?: number }): Promise<void>;
}

/**
 * libuv threads never given to transforms. sharp runs each transform on one libuv thread, and
 * so do the edge's cache reads, DNS lookups of origins and the disk check of /readyz: with
 * every thread converting, a cache hit would wait behind the slowest transform.
 */
const RESERVED_THREADS = 2;

/** Fetched originals the waiting transforms may hold, in all: four of the largest allowed. */
const MAX_WAITING_BYTES = 256 * 1024 ** 2;

/** What Node sized its thread pool to (it reads the variable once, before the first task). */
function threadPoolSize(): number {
  return Number(process.env.UV_THREADPOOL_SIZE) || 4;
}

const DEFAULTS = {
  originTimeoutMs: 10_000,
  maxInputBytes: 50 * 1024 ** 2,
  maxInputPixels: 100_000_000,
  maxOutputPixels: 50_000_000,
  originPollMs: 1_000,
  meteringFlushMs: 2_000,
  minFreeDiskBytes: 100 * 1024 ** 2,
  hitPath: true,
} satisfies Partial<EdgeOptions>;

export async function createEdge(deps: EdgeDeps, overrides: Partial<EdgeOptions> = {}): Promise<Edge> {
  const { config } = deps;
  const options: EdgeOptions = {
    cacheDir: join(config.DATA_DIR, 'edge-cache'),
    cacheMaxBytes: config.EDGE_CACHE_MAX_MB * 1024 ** 2,
    cacheMaxEntries: config.EDGE_CACHE_MAX_ENTRIES,
    memoryCacheBytes: config.EDGE_MEMORY_CACHE_MB * 1024 ** 2,
    transformConcurrency: config.EDGE_TRANSFORM_CONCURRENCY,
    transformQueue: config.EDGE_TRANSFORM_QUEUE,
    transformWaitMs: config.EDGE_TRANSFORM_WAIT_MS,
    transformTimeoutMs: config.EDGE_TRANSFORM_TIMEOUT_MS,
    transformBudget: config.EDGE_TRANSFORM_BUDGET,
    maxFrames: config.EDGE_MAX_FRAMES,
    sharedTier: config.RESULT_CACHE_S3_BUCKET
      ? {
          endpoint: config.RESULT_CACHE_S3_ENDPOINT ?? '',
          bucket: config.RESULT_CACHE_S3_BUCKET,
          region: config.RESULT_CACHE_S3_REGION,
          accessKeyId: config.RESULT_CACHE_S3_ACCESS_KEY_ID,
          secretAccessKey: config.RESULT_CACHE_S3_SECRET_ACCESS_KEY,
          prefix: config.RESULT_CACHE_S3_PREFIX,
          timeoutMs: config.RESULT_CACHE_S3_TIMEOUT_MS,
        }
      : null,
    ...DEFAULTS,
    ...(config.EDGE_ORIGIN_TIMEOUT_MS ? { originTimeoutMs: config.EDGE_ORIGIN_TIMEOUT_MS } : {}),
    ...(config.READY_MIN_FREE_MB !== undefined
      ? { minFreeDiskBytes: config.READY_MIN_FREE_MB * 1024 ** 2 }
      : {}),
    ...overrides,
  };
  // libvips' operation cache keeps up to 50 MB of recent operations for reuse; every miss here
  // is an operation on a fresh buffer, never repeated (repeats are answered from the edge's own
  // caches), so it only held memory: off, as imgproxy does.
  sharp.cache(false);
  // The edge's own process already names itself; the all-in-one one names its parts.
  const log = deps.log.bindings().app === 'edge' ? deps.log : deps.log.child({ app: 'edge' });
  const transformThreads = Math.max(1, threadPoolSize() - RESERVED_THREADS);
  if (options.transformConcurrency > transformThreads) {
    log.warn(
      {
        asked: options.transformConcurrency,
        running: transformThreads,
        UV_THREADPOOL_SIZE: threadPoolSize(),
      },
      `fewer transforms at once than asked: set UV_THREADPOOL_SIZE to at least EDGE_TRANSFORM_CONCURRENCY + ${RESERVED_THREADS}`,
    );
    options.transformConcurrency = transformThreads;
  }
  const cache = new DiskCache({
    dir: options.cacheDir,
    maxBytes: options.cacheMaxBytes,
    maxEntries: options.cacheMaxEntries,
    memoryBytes: options.memoryCacheBytes,
  });
  await cache.init();
  const limits = { timeoutMs: options.originTimeoutMs, maxBytes: options.maxInputBytes };
  const http = new HttpFetcher(deps.config.ALLOW_PRIVATE_ORIGINS, limits);
  const s3 = new S3Fetcher(deps.config.ALLOW_PRIVATE_ORIGINS, limits);
  const metering = new Metering(deps.db, log);
  let fanOut: FanOut | undefined;
  const registry = new OriginRegistry(deps.db, deps.secrets, log, {
    removed: (originId) => handler.purgeOrigin(originId),
    changed: () => {
      fanOut?.publishOriginsChanged().catch((error: unknown) => log.warn({ err: error }, 'fan-out failed'));
    },
  });
  const metrics: EdgeMetrics = new EdgeMetrics({
    queueDepth: () => handler.transformQueue.queued,
    activeTransforms: () => handler.transformQueue.running,
    cacheSize: () => cache.size,
    sourceBytes: () => handler.sourceBytes,
    redisConnected: () => (fanOut?.connected ? 1 : 0),
  });
  const shared = options.sharedTier
    ? new SharedTier(await s3Sdk(), options.sharedTier, metrics, log)
    : undefined;
  const health = new Health({
    cache: diskCheck(options.cacheDir, options.minFreeDiskBytes),
    // The edge serves from its loaded origins and its cache while these are away.
    database: databaseCheck(deps.db, false),
  });
  const handler: EdgeHandler = new EdgeHandler({
    registry,
    cache,
    shared,
    http,
    s3,
    metering,
    log,
    metrics,
    accessLogSample: config.EDGE_ACCESS_LOG_SAMPLE,
    hitPath: options.hitPath,
    probe: (path) => health.probe(path),
    trustProxy: deps.config.TRUST_PROXY,
    limits: {
      maxInputPixels: options.maxInputPixels,
      maxOutputPixels: options.maxOutputPixels,
      maxFrames: options.maxFrames,
      maxCost: options.transformBudget,
      timeoutMs: options.transformTimeoutMs,
    },
    queue: {
      concurrency: options.transformConcurrency,
      maxWaiting: options.transformQueue,
      maxWaitingBytes: MAX_WAITING_BYTES,
      maxWaitMs: options.transformWaitMs,
    },
  });
  if (deps.config.REDIS_URL) {
    fanOut = new FanOut(
      deps.config.REDIS_URL,
      {
        purge: (originId, imagePath) => {
          metrics.purges.inc({ source: 'edge' });
          return handler.purge(originId, imagePath);
        },
        originsChanged: () => registry.refresh(),
        cache: async (originId, url, remove) => {
          if (remove) metrics.purges.inc({ source: 'server' });
          return (await handler.variantUrls(originId, url, remove))?.urls ?? [];
        },
        purgePrefix: (originId, pathPrefix) => {
          metrics.purges.inc({ source: 'edge' });
          return handler.purgePrefix(originId, pathPrefix);
        },
      },
      log,
      join(options.cacheDir, 'purge-log-position'),
    );
    const redis = fanOut;
    health.add(
      'redis',
      redisCheck(() => redis.ping()),
    );
    // Redis down at start must not keep the edge from serving: ioredis subscribes once it can.
    const subscribed = fanOut
      .start()
      .catch((error: unknown) => log.warn({ err: error }, 'redis subscribe failed'));
    await Promise.race([subscribed, new Promise((resolve) => setTimeout(resolve, 2_000).unref())]);
  }
  await registry.start(options.originPollMs);
  metering.start(options.meteringFlushMs);
  const workerPriority = new WorkerPriority();
  workerPriority.start(() => handler.transformQueue.running > 0);
  const server = options.hitPath
    ? new HotPathServer({ keepAliveTimeout: 65_000 }, handler.listener, handler.hotAnswer)
    : createServer({ keepAliveTimeout: 65_000 }, handler.listener);
  // HTTPS for custom domains: the handshake here, then the connection is the HTTP server's
  // as any other (its hot path included); the handler checks Host against the SNI name.
  const tlsServer = createTlsServer(
    {
      ALPNProtocols: ['http/1.1'],
      SNICallback: (servername, callback) => {
        const context = registry.tlsFor(servername);
        if (context) callback(null, context);
        else callback(new Error(`no certificate for ${servername}`), undefined);
      },
    },
    (socket) => server.emit('connection', socket),
  );
  tlsServer.on('tlsClientError', (error, socket) => {
    log.debug({ err: error }, 'TLS handshake failed');
    socket.destroy();
  });

  const variants = async (originId: number, url: string, remove: boolean) => {
    const found = await handler.variantUrls(originId, url, remove);
    if (found && remove) {
      metrics.purges.inc({ source: 'local' });
      await publish(originId, { imagePath: found.imagePath });
    }
    return found?.urls ?? [];
  };
  // This edge's copy is gone either way; the others hear of it only through Redis.
  const publish = (originId: number, target: Parameters<FanOut['publishPurge']>[1]) =>
    fanOut
      ?.publishPurge(originId, target)
      .catch((error: unknown) => log.warn({ err: error }, 'purge fan-out failed'));
  return {
    server,
    tlsServer,
    purge: (originId, url) => variants(originId, url, true),
    lookup: (originId, url) => variants(originId, url, false),
    async purgePrefix(originId, pathPrefix) {
      metrics.purges.inc({ source: 'local' });
      const images = await handler.purgePrefix(originId, pathPrefix);
      await publish(originId, { pathPrefix });
      return images;
    },
    refreshOrigins: () => registry.refresh(),
    flushUsage: () => metering.flush(),
    metrics: metrics.registry,
    health,
    async close({ graceMs = 0 } = {}) {
      health.shuttingDown = true;
      await drainServer(server, graceMs, [tlsServer]);
      handler.accessLog.flush();
      registry.stop();
      workerPriority.stop();
      await metering.stop();
      http.close();
      s3.close();
      shared?.close();
      await fanOut?.close();
    },
  };
}
