// The edge's memory over a long run (issue 21): misses at concurrency 32 for
// BENCH_SOAK_SECONDS (default 600), every URL new, the edge process's RSS sampled every 5 s.
// Its caches grow as a cold cache fills until their bounds, which are set low here
// (EDGE_CACHE_MAX_ENTRIES 20,000, EDGE_MEMORY_CACHE_MB 16) so that the run reaches them in its
// first minutes. Target: flat once they are full, the last minute's peak within 5 % of the
// peak of the minute at half time; nothing grows with the number of requests served.
import { Agent } from 'node:http';
import { getWithHost, photoLike, report, round2, rssMb, serveFiles, startEdge } from './lib.ts';

const SECONDS = Number(process.env.BENCH_SOAK_SECONDS ?? 600);
const CONCURRENCY = 32;

const photo = await photoLike(1224, 816).jpeg({ quality: 85 }).toBuffer();
const origin = await serveFiles({ '/p1.jpg': { contentType: 'image/jpeg', body: photo } });
const edge = await startEdge({
  origin: { host: `127.0.0.1:${origin.port}`, pathPrefix: '' },
  probePath: '/w=10/p1.jpg',
  env: { EDGE_CACHE_MAX_ENTRIES: '20000', EDGE_MEMORY_CACHE_MB: '16' },
});
const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
try {
  const samples: Array<{ at: number; rss: number }> = [];
  const started = Date.now();
  const sampler = setInterval(() => samples.push({ at: Date.now() - started, rss: rssMb(edge.pid) }), 5_000);
  let serial = 0;
  let answered = 0;
  let failed = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (Date.now() - started < SECONDS * 1000) {
        const n = serial++;
        // Small variants of many sizes: the index grows fastest per second of conversion.
        const answer = await getWithHost(
          edge.port,
          edge.host,
          `/w=${40 + (n % 200)},h=${40 + Math.floor(n / 200)}/p1.jpg`,
          agent,
        );
        if (answer.status === 200) answered++;
        else if (answer.status === 503) await new Promise((resolve) => setTimeout(resolve, 1_000));
        else failed++;
      }
    }),
  );
  clearInterval(sampler);
  if (failed > 0) throw new Error(`${failed} requests failed`);
  const peakBetween = (from: number, to: number) =>
    Math.max(...samples.filter((s) => s.at >= from && s.at < to).map((s) => s.rss));
  const first = peakBetween(0, 60_000);
  const half = peakBetween(SECONDS * 500 - 30_000, SECONDS * 500 + 30_000);
  const last = peakBetween(SECONDS * 1000 - 60_000, SECONDS * 1000);
  report(
    'edge-soak',
    {
      seconds: SECONDS,
      variantsMade: answered,
      firstMinutePeakRssMb: first,
      halfTimePeakRssMb: half,
      lastMinutePeakRssMb: last,
      growthAfterHalfTime: round2(last / half),
    },
    { growthAfterHalfTime: '<= 1.05' },
  );
} finally {
  agent.destroy();
  await edge.stop();
  origin.close();
}
