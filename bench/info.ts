// f=json (issue 14): the info answer served from the edge's cache, in requests per second
// (target >= 500 req/s), beside the image variant it describes served the same way; and what a
// miss costs, f=json against the plain variant, on widths nobody asked for before.
// The edge runs in its own process (start:edge); the load comes from this one.
import autocannon from 'autocannon';
import { mean, photoLike, report, serveFiles, startEdge } from './lib.ts';

const CONNECTIONS = 8;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const HIT_SECONDS = Number(process.env.BENCH_DURATION ?? 5);
const MISSES = Number(process.env.BENCH_MISSES ?? 20);

const photo = await photoLike(2000, 1500).jpeg({ quality: 85 }).toBuffer();
const origin = await serveFiles({ '/photo.jpg': { contentType: 'image/jpeg', body: photo } });
const edge = await startEdge({
  origin: { host: `127.0.0.1:${origin.port}`, pathPrefix: '' },
  probePath: '/w=10/photo.jpg',
});
try {
  // Misses, one at a time so each time is the request's own: f=json does the conversion and
  // reads its result back, so it costs a little more than the variant.
  const missMs = async (path: (width: number) => string, first: number): Promise<number> => {
    const times: number[] = [];
    for (let width = first; width < first + MISSES; width++) {
      const started = performance.now();
      const answer = await edge.get(path(width));
      if (answer.status !== 200) throw new Error(`edge answered ${answer.status}`);
      times.push(performance.now() - started);
    }
    return times.sort((a, b) => a - b)[Math.floor(times.length / 2)]!;
  };
  await missMs((w) => `/w=${w},f=webp,q=80/photo.jpg`, 100); // warm-up
  const imageMissMs = await missMs((w) => `/w=${w},f=webp,q=80/photo.jpg`, 300);
  const infoMissMs = await missMs((w) => `/w=${w},f=webp,q=80,f=json/photo.jpg`, 500);

  const infoPath = '/w=400,f=webp,q=80,f=json/photo.jpg';
  const imagePath = '/w=400,f=webp,q=80/photo.jpg';
  const info = (await edge.get(infoPath)).body;
  const image = (await edge.get(imagePath)).body;
  const hammer = async (path: string) => {
    const result = await autocannon({
      url: `http://127.0.0.1:${edge.port}${path}`,
      headers: { host: edge.host },
      connections: CONNECTIONS,
      duration: HIT_SECONDS,
    });
    if (result.non2xx > 0 || result.errors > 0) throw new Error(`hits of ${path} had failures`);
    return result.requests.average;
  };
  await hammer(infoPath); // warm-up
  const infoRps: number[] = [];
  const imageRps: number[] = [];
  // Alternating, so that machine noise hits both alike.
  for (let round = 0; round < ROUNDS; round++) {
    infoRps.push(await hammer(infoPath));
    imageRps.push(await hammer(imagePath));
  }
  report(
    'info',
    {
      infoHitRequestsPerSecond: Math.round(mean(infoRps)),
      imageHitRequestsPerSecond: Math.round(mean(imageRps)),
      infoBytes: info.length,
      imageBytes: image.length,
      infoMissMs: Math.round(infoMissMs),
      imageMissMs: Math.round(imageMissMs),
    },
    { infoHitRequestsPerSecond: '>= 500' },
  );
} finally {
  await edge.stop();
  origin.close();
}
