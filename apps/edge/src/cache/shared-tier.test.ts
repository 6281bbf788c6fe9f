import { createServer, type Server } from 'node:net';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { EdgeMetrics } from '../metrics.ts';
import { DiskCache } from './disk-cache.ts';
import { s3Sdk } from '../origins/s3-sdk.ts';
import { SharedTier, type SharedTierOptions } from './shared-tier.ts';

const sdk = await s3Sdk();

const metrics = () =>
  new EdgeMetrics({
    queueDepth: () => 0,
    activeTransforms: () => 0,
    cacheSize: () => ({ entries: 0, bytes: 0, memoryBytes: 0 }),
    sourceBytes: () => 0,
    redisConnected: () => 0,
  });

const options = (overrides: Partial<SharedTierOptions> = {}): SharedTierOptions => ({
  endpoint: 'http://127.0.0.1:9',
  bucket: 'results',
  region: '',
  accessKeyId: 'key',
  secretAccessKey: 'secret',
  prefix: '',
  timeoutMs: 100,
  ...overrides,
});

const lookups = async (edgeMetrics: EdgeMetrics) =>
  Object.fromEntries(
    (await edgeMetrics.sharedLookups.get()).values.map((value) => [value.labels.result, value.value]),
  );

describe('SharedTier', () => {
  const servers: Server[] = [];
  afterAll(() => servers.forEach((server) => server.close()));

  it('mirrors the disk layout under the prefix, so a purge is a prefix of keys', () => {
    const id = DiskCache.idOf(7, '/images/a.jpg', 'w=100||digest');
    const log = pino({ level: 'silent' });
    expect(new SharedTier(sdk, options(), metrics(), log).keyOf(id)).toBe(id);
    expect(new SharedTier(sdk, options({ prefix: 'fleet-a' }), metrics(), log).keyOf(id)).toBe(
      `fleet-a/${id}`,
    );
    expect(new SharedTier(sdk, options({ prefix: 'x/results/' }), metrics(), log).keyOf(id)).toBe(
      `x/results/${id}`,
    );
    // Origin 7's image directory: `7/{32 hex}/`, never a prefix of origin 70's keys.
    expect(id).toMatch(/^7\/[0-9a-f]{32}\/[0-9a-f]{32}$/);
  });

  it('takes a bucket that does not answer in time for a miss, counted as a timeout', async () => {
    // Accepts connections and never answers: the worst a bucket can do.
    const silent = createServer(() => {});
    servers.push(silent);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as { port: number }).port;
    const edgeMetrics = metrics();
    const tier = new SharedTier(
      sdk,
      options({ endpoint: `http://127.0.0.1:${port}` }),
      edgeMetrics,
      pino({ level: 'silent' }),
    );
    const started = performance.now();
    expect(await tier.load(DiskCache.idOf(1, '/a.jpg', 'w=1'))).toBeUndefined();
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(await lookups(edgeMetrics)).toEqual({ timeout: 1 });
    tier.close();
  });
});
