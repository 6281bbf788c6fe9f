// Smart crops (issue 14): CPU per request of a g=attention crop-to-fill miss (a=2, 400x400
// from a 2000x1500 JPEG) in the edge's own process (start:edge), against a bare sharp script doing the same
// resize with the same strategy and encoder settings: target <= 1.10x. The server runs on
// PostgreSQL (lib.ts) so that the database's work is not counted in the process measured.
// Rounds alternate between the edge and its reference so that machine noise hits both alike.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { cpuMsOf, mean, photoLike, pool, report, round2, serveFiles, startEdge } from './lib.ts';

const CONCURRENCY = 4;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const MISSES_PER_ROUND = Number(process.env.BENCH_MISSES ?? 48);

// The edge's defaults for a JPEG answer (q=75, Huffman optimisation, metadata stripped).
const crop = (input: Buffer) =>
  sharp(input)
    .resize({ width: 400, height: 400, fit: 'cover', position: sharp.strategy.attention })
    .jpeg({ quality: 75, optimiseCoding: true, mozjpeg: false });

// The reference: the same crop with nothing around it, in its own process.
if (process.argv[2] === 'bare') {
  // As the edge runs it: every request here is the same operation, which libvips' operation
  // cache would otherwise answer in part from the previous one.
  sharp.cache(false);
  const input = readFileSync(process.argv[3]!);
  const count = Number(process.argv[4]);
  for (let i = 0; i < 3; i++) await crop(input).toBuffer();
  const before = process.cpuUsage();
  await pool(
    Array.from({ length: count }, (_, i) => i),
    CONCURRENCY,
    async () => {
      await crop(input).toBuffer();
    },
  );
  const used = process.cpuUsage(before);
  process.stdout.write(JSON.stringify({ cpuMs: (used.user + used.system) / 1000 }));
  process.exit(0);
}

// A photograph-like picture (blurred noise) with a sharper, brighter subject off-centre, so
// that the strategy has something to find.
const subject = await sharp({
  create: {
    width: 300,
    height: 300,
    channels: 3,
    background: '#c04020',
    noise: { type: 'gaussian', mean: 160, sigma: 90 },
  },
})
  .png()
  .toBuffer();
const photo = await photoLike(2000, 1500)
  .composite([{ input: subject, left: 1500, top: 200 }])
  .jpeg({ quality: 85 })
  .toBuffer();
const inputPath = join(mkdtempSync(join(tmpdir(), 'ukiyo-bench-smart-crop-')), 'photo.jpg');
writeFileSync(inputPath, photo);

const origin = await serveFiles({ '/photo.jpg': { contentType: 'image/jpeg', body: photo } });
const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
const edge = await startEdge({
  origin: { host: `127.0.0.1:${origin.port}`, pathPrefix: '' },
  probePath: '/w=10/photo.jpg',
  agent,
});
try {
  // Every request a miss at the same cost: a background colour, which an opaque crop never
  // shows, gives each its own variant.
  let serial = 0;
  const nextPaths = () =>
    Array.from({ length: MISSES_PER_ROUND }, () => {
      const b = (serial++).toString(16).padStart(6, '0');
      return `/w=400,h=400,a=2,g=attention,b=${b}/photo.jpg`;
    });
  const miss = async (path: string) => {
    const answer = await edge.get(path);
    if (answer.status !== 200) throw new Error(`edge answered ${answer.status}: ${answer.body.toString()}`);
  };
  await pool(nextPaths(), CONCURRENCY, miss); // warm-up
  const edgeCpu: number[] = [];
  const bareCpu: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const paths = nextPaths();
    const before = cpuMsOf(edge.pid);
    await pool(paths, CONCURRENCY, miss);
    edgeCpu.push((cpuMsOf(edge.pid) - before) / paths.length);
    const bare = spawnSync(
      process.execPath,
      ['--import', 'tsx', fileURLToPath(import.meta.url), 'bare', inputPath, String(paths.length)],
      { encoding: 'utf8' },
    );
    if (bare.status !== 0) throw new Error(`bare sharp failed: ${bare.stderr}`);
    bareCpu.push((JSON.parse(bare.stdout) as { cpuMs: number }).cpuMs / paths.length);
  }

  // The edge's crop is sharp's: the same pixels as the reference's.
  const edgeCrop = await edge.get('/w=400,h=400,a=2,g=attention/photo.jpg');
  const bareCrop = await crop(photo).toBuffer();
  const [edgeRaw, bareRaw] = await Promise.all(
    [edgeCrop.body, bareCrop].map((data) => sharp(data).raw().toBuffer()),
  );
  const sameCrop = edgeRaw!.equals(bareRaw!) ? 1 : 0;

  report(
    'smart-crop',
    {
      missCpuMsPerRequest: round2(mean(edgeCpu)),
      bareSharpCpuMsPerRequest: round2(mean(bareCpu)),
      missCpuRatio: round2(mean(edgeCpu) / mean(bareCpu)),
      sameCrop,
    },
    { missCpuRatio: '<= 1.10', sameCrop: '= 1' },
  );
} finally {
  await edge.stop();
  agent.destroy();
  origin.close();
}
