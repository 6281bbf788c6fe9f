// Revalidating stale variants with the origin: what a repeat of one URL costs the edge when the
// origin sends `Cache-Control: no-cache` (every copy stale at once), with an ETag (the edge asks
// If-None-Match and serves its copy on 304) and without one (the edge fetches and converts it
// again, as it did for both before revalidation). One edge process (start:edge) on PostgreSQL;
// the origin here, serving a real-size photo (2000x1500 JPEG), converted to 400 px WebP q80.
// Rounds alternate the two kinds; each round's repeats go one at a time over one keep-alive
// connection. Figures: the edge's CPU per repeat (/proc), its p50 latency, and the origin bytes
// each repeat costs.
import { Agent, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import { cpuMsOf, getWithHost, median, photoLike, report, round2, startEdge } from './lib.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
// Enough repeats that /proc's 10 ms clock ticks resolve a revalidated repeat's CPU.
const REPEATS = Number(process.env.BENCH_REPEATS ?? 50);
const KINDS = ['versioned', 'unversioned'] as const;
type Kind = (typeof KINDS)[number];
const ETAG = '"photo-v1"';

const photo = await photoLike(2000, 1500).jpeg({ quality: 85 }).toBuffer();
const sent: Record<Kind, { requests: number; bytes: number; notModified: number }> = {
  versioned: { requests: 0, bytes: 0, notModified: 0 },
  unversioned: { requests: 0, bytes: 0, notModified: 0 },
};
const origin = createServer((req, res) => {
  const kind = KINDS.find((each) => req.url === `/${each}/photo.jpg`);
  if (!kind) return res.writeHead(404).end();
  sent[kind].requests++;
  const versioned = kind === 'versioned';
  if (versioned && req.headers['if-none-match'] === ETAG) {
    sent[kind].notModified++;
    return res.writeHead(304, { etag: ETAG, 'cache-control': 'no-cache' }).end();
  }
  sent[kind].bytes += photo.length;
  res
    .writeHead(200, {
      'content-type': 'image/jpeg',
      'cache-control': 'no-cache',
      ...(versioned ? { etag: ETAG } : {}),
    })
    .end(photo);
});
origin.keepAliveTimeout = 120_000;
await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
const edge = await startEdge({
  origin: { host: `127.0.0.1:${(origin.address() as AddressInfo).port}`, pathPrefix: '' },
  probePath: '/w=10/versioned/photo.jpg',
});
const agent = new Agent({ keepAlive: true, maxSockets: 1 });
const path = (kind: Kind) => `/w=400,f=webp,q=80/${kind}/photo.jpg`;

/** The edge's CPU per repeat and each repeat's milliseconds; any answer but 200 stops the run. */
async function repeats(kind: Kind): Promise<{ cpuMs: number; times: number[] }> {
  const times: number[] = [];
  const cpuBefore = cpuMsOf(edge.pid);
  for (let i = 0; i < REPEATS; i++) {
    const started = performance.now();
    const answer = await getWithHost(edge.port, edge.host, path(kind), agent);
    times.push(performance.now() - started);
    if (answer.status !== 200) throw new Error(`${path(kind)}: edge answered ${answer.status}`);
  }
  return { cpuMs: (cpuMsOf(edge.pid) - cpuBefore) / REPEATS, times };
}

try {
  // Each kind's first answer is a miss either way.
  for (const kind of KINDS) await getWithHost(edge.port, edge.host, path(kind), agent);
  const before = structuredClone(sent);
  const cpu: Record<Kind, number[]> = { versioned: [], unversioned: [] };
  const times: Record<Kind, number[]> = { versioned: [], unversioned: [] };
  for (let round = 0; round < ROUNDS; round++) {
    for (const kind of round % 2 ? [...KINDS].reverse() : KINDS) {
      const measured = await repeats(kind);
      cpu[kind].push(measured.cpuMs);
      times[kind].push(...measured.times);
    }
  }
  const perRepeat = (kind: Kind, field: 'bytes' | 'requests') =>
    (sent[kind][field] - before[kind][field]) / (ROUNDS * REPEATS);
  const versionedCpu = median(cpu.versioned);
  const unversionedCpu = median(cpu.unversioned);
  report(
    'revalidation',
    {
      loadavg1: round2(loadavg()[0]!),
      versionedCpuMs: round2(versionedCpu),
      unversionedCpuMs: round2(unversionedCpu),
      cpuRatio: round2(versionedCpu / unversionedCpu),
      versionedP50Ms: round2(median(times.versioned)),
      unversionedP50Ms: round2(median(times.unversioned)),
      versionedOriginBytes: Math.round(perRepeat('versioned', 'bytes')),
      unversionedOriginBytes: Math.round(perRepeat('unversioned', 'bytes')),
      versionedOriginRequests: round2(perRepeat('versioned', 'requests')),
    },
    {},
  );
  if (sent.versioned.notModified === 0) throw new Error('the origin never answered 304: no revalidation');
} finally {
  await edge.stop();
  agent.destroy();
  origin.close();
}
