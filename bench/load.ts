// Sustained load on the image edge (issue 8): first the capacity of the edge under a mixed
// workload (HIT_PERCENT of requests on a warm set of variants, the rest misses on widths nobody
// asked for before), then LOAD_SECONDS (default 600 = 10 min) at LOAD_FRACTION (0.8) of that
// capacity. Targets: no errors, no non-2xx, resident memory flat within 10% (mean of the first
// and last fifth of the run after a warm-up fifth). The process is `npm start`'s, on PostgreSQL
// when DATABASE_URL names a server (a database is created for the run and dropped), else on
// embedded PGlite (whose ~440 MB then dominates RSS). Memory is compared once the edge's caches
// are full, as in production: a cold disk cache's index grows by ~300 bytes per variant until
// the cache reaches its size, so the run gives the edge a LOAD_CACHE_MB (200) disk cache, which the
// misses fill within the warm-up fifth of the run.
//   npm run bench -- load                      # 10 minutes
//   LOAD_SECONDS=120 npm run bench -- load     # a short run
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import autocannon from 'autocannon';
import pg from 'pg';
import { createOrigin, photoLike, portBase, report, startServer } from './lib.ts';

const LOAD_SECONDS = Number(process.env.LOAD_SECONDS ?? 600);
const CAPACITY_SECONDS = Number(process.env.CAPACITY_SECONDS ?? 20);
const LOAD_FRACTION = Number(process.env.LOAD_FRACTION ?? 0.8);
const HIT_PERCENT = Number(process.env.HIT_PERCENT ?? 90);
const CONNECTIONS = Number(process.env.LOAD_CONNECTIONS ?? 16);
const HOT_VARIANTS = 50;
const SAMPLE_MS = 2_000;

function rssMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'))!;
  return Number(line.split(/\s+/)[1]) / 1024;
}

async function freshDatabase(): Promise<{ url: string | undefined; drop(): Promise<void> }> {
  const serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) return { url: undefined, drop: async () => {} };
  const name = `ukiyo_load_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const cleanup = new pg.Client({ connectionString: serverUrl });
      await cleanup.connect();
      await cleanup.query(`drop database if exists ${name} with (force)`);
      await cleanup.end();
    },
  };
}

/** A GET with a chosen Host header (fetch() will not send one). */
function get(port: number, host: string, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { host } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

// The origin: one photograph-like 1600x1200 JPEG for every path (the edge keeps recent
// originals in memory, so the origin costs little next to the transforms).
const photo = await photoLike(1600, 1200, { sigma: 50 }).jpeg({ quality: 85 }).toBuffer();
const origin = createServer((_req, res) =>
  res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': photo.length }).end(photo),
);
await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));

const database = await freshDatabase();
const edgePort = portBase();
const metricsPort = edgePort + 3;
const EMAIL = 'load@example.com';
const PASSWORD = 'load-password-123';
const server = await startServer({
  BOOTSTRAP_ADMIN_EMAIL: EMAIL,
  BOOTSTRAP_ADMIN_PASSWORD: PASSWORD,
  DEMO: '1',
  EDGE_PORT: String(edgePort),
  METRICS_PORT: String(metricsPort),
  ALLOW_PRIVATE_ORIGINS: '1',
  EDGE_CACHE_MAX_MB: process.env.LOAD_CACHE_MB ?? '200',
  ...(database.url ? { DATABASE_URL: database.url } : {}),
});
const pid = server.process.pid!;

try {
  const host = await createOrigin(
    server.url,
    { email: EMAIL, password: PASSWORD },
    { host: `127.0.0.1:${(origin.address() as AddressInfo).port}`, pathPrefix: '' },
    async (candidate) => (await get(edgePort, candidate, '/w=10/p.jpg')) === 200,
  );
  const edgeUrl = `http://127.0.0.1:${edgePort}`;

  const hotPath = (i: number) => `/w=${200 + (i % HOT_VARIANTS)},f=webp,q=80/photo.jpg`;
  for (let i = 0; i < HOT_VARIANTS; i++) await get(edgePort, host, hotPath(i));
  // Every miss a variant never produced before: width and quality walk a large space.
  let sequence = 0;
  let misses = 0;
  const nextPath = () => {
    const n = sequence++;
    if (n % 100 < HIT_PERCENT) return hotPath(n);
    const m = misses++;
    return `/w=${300 + (m % 1200)},q=${30 + (Math.floor(m / 1200) % 65)}/photo.jpg`;
  };
  const run = (options: Partial<autocannon.Options>) =>
    autocannon({
      url: edgeUrl,
      headers: { host },
      connections: CONNECTIONS,
      requests: [{ setupRequest: (request) => ({ ...request, path: nextPath() }) }],
      ...options,
    } as autocannon.Options);

  const capacity = await run({ duration: CAPACITY_SECONDS });
  const capacityRps = capacity.requests.average;
  const targetRps = Math.max(1, Math.round(capacityRps * LOAD_FRACTION));
  console.log(
    `capacity ${Math.round(capacityRps)} req/s (mixed ${HIT_PERCENT}% hits); loading at ${targetRps} req/s for ${LOAD_SECONDS} s`,
  );

  // Where the memory is, besides RSS: the JS heap, buffers outside it (variant data among
  // them), and the edge's memory cache of variants (bounded: it fills, then stays).
  const metricsNow = async () => {
    const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    return (name: string) =>
      text
        .split('\n')
        .filter((line) => line.startsWith(`${name} `) || line.startsWith(`${name}{`))
        .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
  };
  const MB = 1024 ** 2;
  const samples: Array<{ at: number; rss: number; heap: number; external: number; memoryCache: number }> = [];
  const started = Date.now();
  const sampler = setInterval(() => {
    const at = Date.now() - started;
    const rss = rssMb(pid);
    void metricsNow().then((metric) =>
      samples.push({
        at,
        rss,
        heap: metric('ukiyo_nodejs_heap_size_used_bytes') / MB,
        external: metric('ukiyo_nodejs_external_memory_bytes') / MB,
        memoryCache: metric('ukiyo_edge_memory_cache_bytes') / MB,
      }),
    );
  }, SAMPLE_MS);
  // A line a minute, so a long run shows where memory is heading.
  const progress = setInterval(() => {
    const last = samples.at(-1);
    if (!last) return;
    console.log(
      `${Math.round(last.at / 60_000)} min: rss ${Math.round(last.rss)} MB, heap ${Math.round(last.heap)}, ` +
        `external ${Math.round(last.external)}, memory cache ${Math.round(last.memoryCache)}`,
    );
  }, 60_000);
  const load = await run({ duration: LOAD_SECONDS, overallRate: targetRps });
  clearInterval(sampler);
  clearInterval(progress);

  const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);
  const fifth = (LOAD_SECONDS * 1000) / 5;
  const window = (key: 'rss' | 'heap' | 'external' | 'memoryCache') => ({
    early: mean(samples.filter((s) => s.at >= fifth && s.at < 2 * fifth).map((s) => s[key])),
    late: mean(samples.filter((s) => s.at >= 4 * fifth).map((s) => s[key])),
  });
  const { early, late } = window('rss');
  const heap = window('heap');
  const external = window('external');
  const memoryCache = window('memoryCache');
  const metric = await metricsNow();
  const round1 = (value: number) => Math.round(value * 10) / 10;
  report(
    'load',
    {
      seconds: LOAD_SECONDS,
      capacityRequestsPerSecond: Math.round(capacityRps),
      targetRequestsPerSecond: targetRps,
      achievedRequestsPerSecond: Math.round(load.requests.average),
      requests: load.requests.total,
      errors: load.errors + load.timeouts,
      non2xx: load.non2xx,
      latencyP50Ms: load.latency.p50,
      latencyP99Ms: load.latency.p99,
      cacheHits: metric('ukiyo_edge_cache_hits_total'),
      cacheMisses: metric('ukiyo_edge_cache_misses_total'),
      rssEarlyMb: Math.round(early),
      rssLateMb: Math.round(late),
      rssGrowthPercent: round1(((late - early) / early) * 100),
      peakRssMb: Math.round(Math.max(...samples.map((s) => s.rss))),
      heapUsedEarlyMb: Math.round(heap.early),
      heapUsedLateMb: Math.round(heap.late),
      externalEarlyMb: Math.round(external.early),
      externalLateMb: Math.round(external.late),
      memoryCacheEarlyMb: Math.round(memoryCache.early),
      memoryCacheLateMb: Math.round(memoryCache.late),
      cacheEntries: metric('ukiyo_edge_cache_entries'),
    },
    { errors: '0', non2xx: '0', rssGrowthPercent: '<= 10', achievedRequestsPerSecond: `~${targetRps}` },
  );
  if (load.errors + load.timeouts > 0 || load.non2xx > 0) process.exitCode = 1;
  if (Math.abs(late - early) / early > 0.1) process.exitCode = 1;
} finally {
  server.process.kill('SIGTERM');
  await new Promise((resolve) => server.process.once('exit', resolve));
  origin.close();
  await database.drop();
}
