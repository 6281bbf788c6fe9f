import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { OriginKind, Permission } from '@ukiyo/contract';
import {
  AppProcess,
  Client,
  createTenant,
  createTestUser,
  get,
  PASSWORD,
  PrivateRedis,
  processEnv,
  sleep,
  testServer,
  until,
  testDatabaseUrl,
} from '@ukiyo/server/testing';
import S3rver from 's3rver';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The shared result cache between edge processes (RESULT_CACHE_S3_*), against s3rver: what one
// edge converted another serves with no transform, a purge through the console empties the
// bucket too, an edge started on an empty volume answers from the bucket, and an entry past
// its freshness is not served. Processes share a PostgreSQL server (PGlite is one process's)
// and a private Redis for the purge; skipped without them, as the fleet test is.
const databaseUrl = testDatabaseUrl();
const skipReason = !databaseUrl
  ? 'needs DATABASE_URL (edge processes sharing one PostgreSQL)'
  : !PrivateRedis.available()
    ? 'needs redis-server on PATH (purges reach the edges over Redis)'
    : '';
if (skipReason) console.warn(`result-cache.int.test.ts skipped: ${skipReason}`);

const BUCKET = 'results';
const PREFIX = 'fleet';

describe.skipIf(skipReason !== '')('shared result cache: two edges and s3rver', () => {
  const redis = new PrivateRedis();
  const procs: AppProcess[] = [];
  let s3rver: S3rver;
  let s3: S3Client;
  let endpoint: string;
  let originServer: Server;
  let originHits = 0;
  let secretKey: string;
  let consoleClient: Client;
  let host: string;
  let originID: number;
  let edges: AppProcess[];

  const edgePort = (edge: AppProcess) => Number(edge.env.EDGE_PORT);
  /** A metric's value summed over its series, those with `label` (e.g. `result="hit"`) only. */
  const metric = async (edge: AppProcess, name: string, label = '') =>
    (await get(Number(edge.env.METRICS_PORT), 'localhost', '/metrics')).body
      .toString()
      .split('\n')
      .filter((line) => /^[a-z_]+/.exec(line)?.[0] === name && line.includes(label))
      .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
  const transforms = (edge: AppProcess) => metric(edge, 'ukiyo_edge_transform_duration_seconds_count');
  /** The bucket's keys for one source image: `{prefix}/{originId}/{hash(image path)}/`. */
  const imageKeys = async (imagePath: string) => {
    const hash = createHash('sha256').update(imagePath).digest('hex').slice(0, 32);
    const listed = await s3.send(
      new ListObjectsV2Command({ Bucket: BUCKET, Prefix: `${PREFIX}/${originID}/${hash}/` }),
    );
    return (listed.Contents ?? []).map((object) => object.Key);
  };
  const sharedHits = (edge: AppProcess) =>
    metric(edge, 'ukiyo_edge_shared_cache_lookups_total', 'result="hit"');

  async function startEdge(name: string) {
    const edge = new AppProcess(
      name,
      'apps/edge/src/main.ts',
      await processEnv({
        DATABASE_URL: databaseUrl,
        REDIS_URL: redis.url,
        SECRET_KEY: secretKey,
        ALLOW_PRIVATE_ORIGINS: '1',
        RESULT_CACHE_S3_ENDPOINT: endpoint,
        RESULT_CACHE_S3_BUCKET: BUCKET,
        RESULT_CACHE_S3_ACCESS_KEY_ID: 'S3RVER',
        RESULT_CACHE_S3_SECRET_ACCESS_KEY: 'S3RVER',
        RESULT_CACHE_S3_PREFIX: PREFIX,
        // Generous on a shared 2-core machine; the bench measures what a lookup costs.
        RESULT_CACHE_S3_TIMEOUT_MS: '3000',
      }),
    ).start();
    procs.push(edge);
    await edge.ready();
    await until(`${name} knows the origin`, async () =>
      (await get(edgePort(edge), host, '/w=10/known.jpg')).status === 200 ? true : undefined,
    );
    return edge;
  }

  beforeAll(async () => {
    const photo = await sharp({
      create: { width: 800, height: 600, channels: 3, background: '#3060a0' },
    })
      .jpeg()
      .toBuffer();
    originServer = createServer((req, res) => {
      originHits++;
      // `/short/...` lives two seconds, the rest an hour (the origin's defaultCache).
      const headers = req.url?.startsWith('/short/') ? { 'cache-control': 'max-age=2' } : {};
      res.writeHead(200, { 'content-type': 'image/jpeg', ...headers }).end(photo);
    });
    await new Promise<void>((resolve) => originServer.listen(0, '127.0.0.1', resolve));
    s3rver = new S3rver({
      port: 0,
      address: '127.0.0.1',
      silent: true,
      directory: mkdtempSync(join(tmpdir(), 'ukiyo-results-')),
    });
    endpoint = `http://127.0.0.1:${((await s3rver.run()) as AddressInfo).port}`;
    s3 = new S3Client({
      endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    });
    await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
    await redis.start();
    secretKey = randomBytes(32).toString('base64');

    const harness = await testServer();
    const server = new AppProcess(
      'server',
      'apps/server/src/main-server.ts',
      await processEnv({
        DATABASE_URL: databaseUrl,
        REDIS_URL: redis.url,
        SECRET_KEY: secretKey,
        ALLOW_PRIVATE_ORIGINS: '1',
      }),
    ).start();
    procs.push(server);
    await server.ready();
    const tenant = await createTenant(harness.deps);
    const { email } = await createTestUser(harness.deps, {
      accountId: tenant.accountId,
      permission: Permission.origin | Permission.cache,
    });
    consoleClient = new Client(`http://127.0.0.1:${server.env.PORT}`);
    expect((await consoleClient.login(email, PASSWORD)).status).toBe(200);
    const added = await consoleClient.call('origin.add', {
      origin: {
        kind: OriginKind.http,
        defaultCache: 3600,
        config: {
          scheme: 'http',
          host: `127.0.0.1:${(originServer.address() as AddressInfo).port}`,
          pathPrefix: '',
          rewriteHost: '',
        },
      },
    });
    expect(added.status, JSON.stringify(added.body)).toBe(200);
    ({ originID, name: host } = added.body.origin as { originID: number; name: string });
    edges = [await startEdge('edge-1'), await startEdge('edge-2')];
  }, 180_000);

  afterAll(async () => {
    await Promise.all(procs.map((proc) => proc.stop('SIGKILL')));
    await redis.stop();
    s3?.destroy();
    await s3rver?.close();
    await new Promise((resolve) => originServer?.close(resolve));
  });

  it("serves one edge's variant from another with no transform, the same headers", async () => {
    const [first, second] = edges as [AppProcess, AppProcess];
    const path = '/w=200,f=webp/shared.jpg';
    const made = await get(edgePort(first), host, path);
    expect(made.status).toBe(200);
    expect(made.headers['x-cache']).toBe('MISS');
    // Written off the answer's path: there shortly after.
    await until('the variant in the bucket', async () =>
      (await imageKeys('/shared.jpg')).length === 1 ? true : undefined,
    );
    const hitsBefore = originHits;
    const transformsBefore = await transforms(second);
    const sharedHitsBefore = await sharedHits(second);
    const served = await get(edgePort(second), host, path);
    expect(served.status).toBe(200);
    expect(served.headers['x-cache']).toBe('HIT');
    expect(served.body.equals(made.body)).toBe(true);
    for (const header of ['etag', 'content-type', 'vary', 'surrogate-key', 'cache-tag'])
      expect(served.headers[header], header).toBe(made.headers[header]);
    expect(served.headers['surrogate-key']).toMatch(new RegExp(`^o${originID} o${originID}-[0-9a-f]{16}$`));
    const maxAge = (answer: typeof made) =>
      Number(/max-age=(\d+)/.exec(String(answer.headers['cache-control']))![1]);
    expect(Math.abs(maxAge(served) - maxAge(made))).toBeLessThanOrEqual(2);
    expect(await transforms(second)).toBe(transformsBefore);
    expect(originHits).toBe(hitsBefore);
    expect(await sharedHits(second)).toBe(sharedHitsBefore + 1);
    // Kept on the second edge's own disk and memory: the next answer is local.
    expect((await get(edgePort(second), host, path)).headers['x-cache']).toBe('HIT');
    expect(await sharedHits(second)).toBe(sharedHitsBefore + 1);
  });

  it('recovers an edge started on an empty volume from the bucket', async () => {
    const fresh = await startEdge('edge-fresh');
    const hitsBefore = originHits;
    const transformsBefore = await transforms(fresh);
    const served = await get(edgePort(fresh), host, '/w=200,f=webp/shared.jpg');
    expect(served.headers['x-cache']).toBe('HIT');
    expect(await transforms(fresh)).toBe(transformsBefore);
    expect(originHits).toBe(hitsBefore);
    edges.push(fresh);
  });

  it('does not serve an entry past its freshness', async () => {
    const [first, second] = edges as [AppProcess, AppProcess];
    const path = '/w=90/short/brief.jpg';
    expect((await get(edgePort(first), host, path)).headers['cache-control']).toMatch(/max-age=[12]\b/);
    await until('the variant in the bucket', async () =>
      (await imageKeys('/short/brief.jpg')).length === 1 ? true : undefined,
    );
    await sleep(2_100);
    const transformsBefore = await transforms(second);
    expect((await get(edgePort(second), host, path)).headers['x-cache']).toBe('MISS');
    expect(await transforms(second)).toBe(transformsBefore + 1);
    expect(await metric(second, 'ukiyo_edge_shared_cache_lookups_total', 'result="expired"')).toBe(1);
  });

  it('empties the bucket of a purged image, so every edge makes it again', async () => {
    const [first, second] = edges as [AppProcess, AppProcess];
    const path = '/w=200,f=webp/shared.jpg';
    expect(await imageKeys('/shared.jpg')).toHaveLength(1);
    const purged = await consoleClient.call('cache.delete', { originID, url: `http://${host}${path}` });
    expect(purged.status, JSON.stringify(purged.body)).toBe(200);
    // The call returns once every edge has purged, the bucket included.
    expect(await imageKeys('/shared.jpg')).toEqual([]);
    const transformsBefore = await transforms(second);
    expect((await get(edgePort(second), host, path)).headers['x-cache']).toBe('MISS');
    expect(await transforms(second)).toBe(transformsBefore + 1);
    // The first edge's own copy is gone too: it asks the bucket, which has the new one.
    await until('shared again', async () =>
      (await imageKeys('/shared.jpg')).length === 1 ? true : undefined,
    );
    const sharedHitsBefore = await sharedHits(first);
    expect((await get(edgePort(first), host, path)).headers['x-cache']).toBe('HIT');
    expect(await sharedHits(first)).toBe(sharedHitsBefore + 1);
  });

  it('purges the images under a path prefix, then the whole origin, from both edges and the bucket', async () => {
    const [first, second] = edges as [AppProcess, AppProcess];
    const paths = { a: '/w=120/prefix/a.jpg', b: '/w=120/prefix/sub/b.jpg', keep: '/w=120/keep/c.jpg' };
    for (const path of Object.values(paths))
      for (const edge of edges) expect((await get(edgePort(edge), host, path)).status).toBe(200);
    for (const imagePath of ['/prefix/a.jpg', '/prefix/sub/b.jpg', '/keep/c.jpg'])
      await until(`${imagePath} shared`, async () =>
        (await imageKeys(imagePath)).length === 1 ? true : undefined,
      );

    const purged = await consoleClient.call('cache.purge_prefix', { originID, pathPrefix: '/prefix/' });
    expect(purged.status, JSON.stringify(purged.body)).toBe(200);
    // Each edge held both images under the prefix; the call returns once all have purged.
    expect(purged.body).toEqual({ images: edges.length * 2 });
    expect(await imageKeys('/prefix/a.jpg')).toEqual([]);
    expect(await imageKeys('/prefix/sub/b.jpg')).toEqual([]);
    expect(await imageKeys('/keep/c.jpg')).toHaveLength(1);
    expect((await get(edgePort(first), host, paths.a)).headers['x-cache']).toBe('MISS');
    expect((await get(edgePort(second), host, paths.b)).headers['x-cache']).toBe('MISS');
    for (const edge of edges)
      expect((await get(edgePort(edge), host, paths.keep)).headers['x-cache']).toBe('HIT');

    const everything = await consoleClient.call('cache.purge_prefix', { originID, pathPrefix: '/' });
    expect(everything.status, JSON.stringify(everything.body)).toBe(200);
    expect(await imageKeys('/keep/c.jpg')).toEqual([]);
    expect((await get(edgePort(first), host, paths.keep)).headers['x-cache']).toBe('MISS');
    expect((await get(edgePort(second), host, paths.a)).headers['x-cache']).toBe('MISS');
  });
});
