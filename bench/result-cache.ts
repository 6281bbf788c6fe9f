// The fleet's shared result cache (RESULT_CACHE_S3_*, issue 20): what a shared-tier hit costs
// (target p50 <= 5 ms on loopback against s3rver), beside a local disk hit and a miss. One edge
// process (start:edge) on PostgreSQL with its memory tier off, so that every local hit is read
// from disk; a shared-tier hit is made by removing the edge's variant files after the bucket has
// them, which leaves the edge a local miss that the bucket answers. Requests one at a time over
// one keep-alive connection, timed by this process.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { Agent } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import { getWithHost, photoLike, report, round2, serveFiles, startEdge } from './lib.ts';

const VARIANTS = Number(process.env.BENCH_VARIANTS ?? 200);
const MISSES = Number(process.env.BENCH_MISSES ?? 20);
const BUCKET = 'results';

const s3rver = new S3rver({
  port: 0,
  address: '127.0.0.1',
  silent: true,
  directory: mkdtempSync(join(tmpdir(), 'ukiyo-bench-s3-')),
});
const endpoint = `http://127.0.0.1:${((await s3rver.run()) as AddressInfo).port}`;
const s3 = new S3Client({
  endpoint,
  region: 'us-east-1',
  forcePathStyle: true,
  credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
});
await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
const photo = await photoLike(2000, 1500).jpeg({ quality: 85 }).toBuffer();
const origin = await serveFiles({ '/photo.jpg': { contentType: 'image/jpeg', body: photo } });
const dataDir = mkdtempSync(join(tmpdir(), 'ukiyo-bench-edge-'));
const cacheDir = join(dataDir, 'edge-cache');
const edge = await startEdge({
  origin: { host: `127.0.0.1:${origin.port}`, pathPrefix: '' },
  probePath: '/w=10/photo.jpg',
  env: {
    DATA_DIR: dataDir,
    EDGE_MEMORY_CACHE_MB: '0',
    RESULT_CACHE_S3_ENDPOINT: endpoint,
    RESULT_CACHE_S3_BUCKET: BUCKET,
    RESULT_CACHE_S3_ACCESS_KEY_ID: 'S3RVER',
    RESULT_CACHE_S3_SECRET_ACCESS_KEY: 'S3RVER',
  },
});

const agent = new Agent({ keepAlive: true, maxSockets: 1 });

/** Milliseconds of each GET, one after another; any answer but 200 with this X-Cache stops the run. */
async function timed(paths: string[], cache: 'HIT' | 'MISS'): Promise<number[]> {
  const times: number[] = [];
  for (const path of paths) {
    const started = performance.now();
    const answer = await getWithHost(edge.port, edge.host, path, agent);
    times.push(performance.now() - started);
    if (answer.status !== 200 || answer.headers['x-cache'] !== cache)
      throw new Error(`${path}: edge answered ${answer.status} ${String(answer.headers['x-cache'])}`);
  }
  return times;
}

const p50 = (times: number[]) => round2([...times].sort((a, b) => a - b)[Math.floor(times.length / 2)]!);
const objects = async () => (await s3.send(new ListObjectsV2Command({ Bucket: BUCKET }))).KeyCount ?? 0;

try {
  const paths = Array.from({ length: VARIANTS }, (_, i) => `/w=${400 + i},f=webp,q=80/photo.jpg`);
  const missTimes = await timed(paths.slice(0, MISSES), 'MISS');
  await timed(paths.slice(MISSES), 'MISS');
  // Written to the bucket off the answers' path: wait until all are there (and the probe's).
  for (let attempt = 0; (await objects()) < VARIANTS + 1; attempt++) {
    if (attempt > 100) throw new Error('the variants did not reach the bucket');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const diskTimes = await timed(paths, 'HIT');
  // The edge's files go; its index takes a missing file as a miss, and the bucket answers.
  for (const entry of readdirSync(cacheDir))
    if (/^\d+$/.test(entry)) rmSync(join(cacheDir, entry), { recursive: true });
  const sharedTimes = await timed(paths, 'HIT');
  report(
    'result-cache',
    {
      sharedHitP50Ms: p50(sharedTimes),
      diskHitP50Ms: p50(diskTimes),
      missP50Ms: p50(missTimes),
      variantBytes: (await edge.get(paths[0]!)).body.length,
    },
    { sharedHitP50Ms: '<= 5' },
  );
} finally {
  await edge.stop();
  origin.close();
  s3.destroy();
  await s3rver.close();
}
