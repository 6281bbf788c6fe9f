// The image edge under attack (issue 13), on `npm start`'s process and its embedded database:
// - cache-hit latency and /readyz, first quiet, then with ATTACKERS (8) of the costliest
//   conversions the budget allows in flight on a 12 MP JPEG (each a width nobody asked for,
//   so nothing coalesces or hits): hit p99 < 50 ms, /readyz always 200;
// - FUZZ_URLS (100,000) fuzzed delivery URLs (apps/edge/test/fuzz-urls.ts) on small images:
//   no 5xx but 503 from load shedding.
//   npm run bench -- attack
//   FUZZ_URLS=10000 ATTACK_SECONDS=10 npm run bench -- attack     # a short run
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import sharp from 'sharp';
import { fuzzPaths } from '../apps/edge/test/fuzz-urls.ts';
import { createOrigin, portBase, quantile, report, startServer } from './lib.ts';

const ATTACKERS = Number(process.env.ATTACKERS ?? 8);
const PHASE_SECONDS = Number(process.env.ATTACK_SECONDS ?? 20);
const FUZZ_URLS = Number(process.env.FUZZ_URLS ?? 100_000);
const FUZZ_CONNECTIONS = 16;

function get(port: number, host: string, path: string): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { host } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - started }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** `quantile` to a tenth of a millisecond. */
const percentile = (values: number[], p: number) => Math.round(quantile(values, p / 100) * 10) / 10;

const noise = (width: number, height: number) =>
  sharp({
    create: {
      width,
      height,
      channels: 3,
      background: '#000',
      noise: { type: 'gaussian', mean: 128, sigma: 50 },
    },
  });
const files: Record<string, Buffer> = {
  '/photo.jpg': await noise(4000, 3000).jpeg({ quality: 85 }).toBuffer(),
  '/small/photo.jpg': await noise(320, 240).jpeg().toBuffer(),
  '/small/logo.png': await sharp({ create: { width: 60, height: 30, channels: 4, background: '#f00a' } })
    .png()
    .toBuffer(),
};
const origin = createServer((req, res) => {
  const file = files[req.url ?? ''];
  if (file) res.writeHead(200, { 'content-length': file.length }).end(file);
  else res.writeHead(404).end();
});
await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
const originHost = `127.0.0.1:${(origin.address() as AddressInfo).port}`;

const edgePort = portBase();
const metricsPort = edgePort + 3;
const admin = { email: 'attack@example.com', password: 'attack-password-123' };
const server = await startServer({
  BOOTSTRAP_ADMIN_EMAIL: admin.email,
  BOOTSTRAP_ADMIN_PASSWORD: admin.password,
  EDGE_PORT: String(edgePort),
  METRICS_PORT: String(metricsPort),
  ALLOW_PRIVATE_ORIGINS: '1',
});

try {
  const served = (path: string) => async (host: string) => (await get(edgePort, host, path)).status === 200;
  const photos = await createOrigin(
    server.url,
    admin,
    { host: originHost, pathPrefix: '' },
    served('/w=10/photo.jpg'),
  );
  const small = await createOrigin(
    server.url,
    admin,
    { host: originHost, pathPrefix: 'small' },
    served('/w=10/photo.jpg'),
  );
  const hitPath = '/w=400,f=webp/photo.jpg';
  await get(edgePort, photos, hitPath);

  /** Cache hits one after another for the phase, with /readyz on the edge and metrics ports. */
  const measureHits = async () => {
    const hits: number[] = [];
    const notReady: number[] = [];
    const until = Date.now() + PHASE_SECONDS * 1000;
    while (Date.now() < until) {
      const hit = await get(edgePort, photos, hitPath);
      if (hit.status !== 200) throw new Error(`a hit answered ${hit.status}`);
      hits.push(hit.ms);
      if (hits.length % 20 === 0) {
        for (const [port, host] of [
          [edgePort, 'localhost'],
          [metricsPort, '127.0.0.1'],
        ] as const) {
          const ready = await get(port, host, '/readyz');
          if (ready.status !== 200) notReady.push(ready.status);
        }
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return { hits, notReady };
  };

  const quiet = await measureHits();

  let attacking = true;
  const attackerStatuses = new Map<number, number>();
  const attack = Array.from({ length: ATTACKERS }, async (_, slot) => {
    for (let round = 0; attacking; round++) {
      // Just inside the default budget: ~6.5 MP of WebP with the strongest blur and sharpening.
      const width = 2900 + slot * 40 + (round % 40);
      const path = `/w=${width},a=0,blur=9x100,unsharp=9x10,contrast=150,f=webp/photo.jpg`;
      const { status } = await get(edgePort, photos, path);
      attackerStatuses.set(status, (attackerStatuses.get(status) ?? 0) + 1);
    }
  });
  const attacked = await measureHits();
  attacking = false;
  await Promise.all(attack);

  const fuzzStatuses = new Map<number, number>();
  const paths = fuzzPaths(FUZZ_URLS, 20261124);
  const fuzzStarted = Date.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: FUZZ_CONNECTIONS }, async () => {
      while (next < paths.length) {
        const { status } = await get(edgePort, small, paths[next++]!);
        fuzzStatuses.set(status, (fuzzStatuses.get(status) ?? 0) + 1);
      }
    }),
  );
  const fuzzSeconds = (Date.now() - fuzzStarted) / 1000;
  const count = (statuses: Map<number, number>, test: (status: number) => boolean) =>
    [...statuses].filter(([status]) => test(status)).reduce((sum, [, n]) => sum + n, 0);
  console.log('attacker answers', Object.fromEntries(attackerStatuses));
  console.log('fuzz answers', Object.fromEntries([...fuzzStatuses].sort(([a], [b]) => a - b)));

  const figures = {
    quietHitP50Ms: percentile(quiet.hits, 50),
    quietHitP99Ms: percentile(quiet.hits, 99),
    attackedHitP50Ms: percentile(attacked.hits, 50),
    attackedHitP99Ms: percentile(attacked.hits, 99),
    attackedHitMaxMs: percentile(attacked.hits, 100),
    attackedToQuietP99: Math.round((percentile(attacked.hits, 99) / percentile(quiet.hits, 99)) * 10) / 10,
    readyzNot200: quiet.notReady.length + attacked.notReady.length,
    attackerConversions: attackerStatuses.get(200) ?? 0,
    attackerShed503: attackerStatuses.get(503) ?? 0,
    fuzzUrls: FUZZ_URLS,
    fuzzSeconds: Math.round(fuzzSeconds),
    fuzz2xx: count(fuzzStatuses, (s) => s < 300),
    fuzz4xx: count(fuzzStatuses, (s) => s >= 400 && s < 500),
    fuzz503: fuzzStatuses.get(503) ?? 0,
    fuzzOther5xx: count(fuzzStatuses, (s) => s >= 500 && s !== 503),
  };
  report('attack', figures, { attackedHitP99Ms: '< 50', readyzNot200: '0', fuzzOther5xx: '0' });
  if (figures.attackedHitP99Ms >= 50 || figures.readyzNot200 > 0 || figures.fuzzOther5xx > 0)
    process.exitCode = 1;
} finally {
  server.process.kill('SIGTERM');
  await new Promise((resolve) => server.process.once('exit', resolve));
  origin.close();
}
