// Smart crops (issue 14): CPU per request of a g=attention and of a g=entropy crop-to-fill miss
// (a=2, 400x400 from a 2000x1500 JPEG) in the edge's own process (start:edge), against a bare
// sharp server fetching the same file from the same origin and cropping it with the same
// strategy and encoder settings (peers/sharp-server.mjs, bench/edge.ts's miss peer): target
// <= 1.10x. Measured as bench/edge.ts measures misses: the server runs on PostgreSQL (lib.ts) so
// that the database's work is not counted in the process measured, both are loaded over HTTP
// at concurrency 8, their CPU is read from /proc, and rounds alternate between the edge and the
// peer so that machine noise hits both alike. The load average is reported beside the figures.
import { spawn, type ChildProcess } from 'node:child_process';
import { Agent } from 'node:http';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import {
  cpuMsOf,
  getWithHost,
  mean,
  photoLike,
  pool,
  portBase,
  processTree,
  report,
  round2,
  serveFiles,
  startEdge,
} from './lib.ts';

const CONCURRENCY = 8;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const MISSES_PER_ROUND = Number(process.env.BENCH_MISSES ?? 48);
const STRATEGIES = ['attention', 'entropy'] as const;

const cpuOfTree = (pid: number) => processTree(pid).reduce((sum, each) => sum + cpuMsOf(each), 0);

/** peers/sharp-server.mjs by bare node with start:edge's environment, once it answers. */
async function startPeer(origin: string): Promise<{ port: number; process: ChildProcess }> {
  const port = portBase();
  const child = spawn(process.execPath, [fileURLToPath(new URL('peers/sharp-server.mjs', import.meta.url))], {
    env: {
      ...process.env,
      ORIGIN: origin,
      PORT: String(port),
      MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? '2',
      UV_THREADPOOL_SIZE: process.env.UV_THREADPOOL_SIZE ?? '8',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  for (let attempt = 0; attempt < 200; attempt++) {
    const answer = await getWithHost(port, 'localhost', '/8/jpeg/photo.jpg').catch(() => ({ status: 0 }));
    if (answer.status === 200) return { port, process: child };
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  child.kill();
  throw new Error('peers/sharp-server.mjs did not start');
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

const startLoad = round2(loadavg()[0]!);
const origin = await serveFiles({ '/photo.jpg': { contentType: 'image/jpeg', body: photo } });
const peer = await startPeer(`http://127.0.0.1:${origin.port}`);
const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
const peerAgent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
const edge = await startEdge({
  origin: { host: `127.0.0.1:${origin.port}`, pathPrefix: '' },
  probePath: '/w=10/photo.jpg',
  agent,
});
try {
  const figures: Record<string, number> = {};
  const peerPid = peer.process.pid!;
  const get = async (request: () => Promise<{ status: number; body: Buffer }>) => {
    const answer = await request();
    if (answer.status !== 200) throw new Error(`answered ${answer.status}: ${answer.body.toString()}`);
    return answer.body;
  };
  const peerPath = (strategy: string) => `/400/jpeg/photo.jpg?height=400&strategy=${strategy}`;
  // Every request a miss at the same cost: a background colour, which an opaque crop never
  // shows, gives each its own variant.
  let serial = 0;
  for (const strategy of STRATEGIES) {
    const edgeMiss = () => {
      const b = (serial++).toString(16).padStart(6, '0');
      return get(() => edge.get(`/w=400,h=400,a=2,g=${strategy},b=${b}/photo.jpg`));
    };
    const peerMiss = () => get(() => getWithHost(peer.port, 'localhost', peerPath(strategy), peerAgent));
    const requests = Array.from({ length: MISSES_PER_ROUND }, (_, i) => i);
    // Warm-up: the code paths of both.
    await pool(requests.slice(0, 16), CONCURRENCY, async () => void (await edgeMiss()));
    await pool(requests.slice(0, 16), CONCURRENCY, async () => void (await peerMiss()));
    const edgeCpu: number[] = [];
    const peerCpu: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      let before = cpuOfTree(edge.pid);
      await pool(requests, CONCURRENCY, async () => void (await edgeMiss()));
      edgeCpu.push((cpuOfTree(edge.pid) - before) / requests.length);
      before = cpuOfTree(peerPid);
      await pool(requests, CONCURRENCY, async () => void (await peerMiss()));
      peerCpu.push((cpuOfTree(peerPid) - before) / requests.length);
    }
    // The edge's crop is sharp's: the same pixels as the peer's.
    const [edgeRaw, peerRaw] = await Promise.all(
      [
        get(() => edge.get(`/w=400,h=400,a=2,g=${strategy}/photo.jpg`)),
        get(() => getWithHost(peer.port, 'localhost', peerPath(strategy), peerAgent)),
      ].map(async (answer) =>
        sharp(await answer)
          .raw()
          .toBuffer(),
      ),
    );
    figures[`${strategy}_missCpuMs`] = round2(mean(edgeCpu));
    figures[`${strategy}_peerCpuMs`] = round2(mean(peerCpu));
    figures[`${strategy}_ratio`] = round2(mean(edgeCpu) / mean(peerCpu));
    figures[`${strategy}_sameCrop`] = edgeRaw!.equals(peerRaw!) ? 1 : 0;
  }
  figures.loadavg1Start = startLoad;
  figures.loadavg1End = round2(loadavg()[0]!);

  report(
    'smart-crop',
    figures,
    Object.fromEntries(
      STRATEGIES.flatMap((strategy) => [
        [`${strategy}_ratio`, '<= 1.10'],
        [`${strategy}_sameCrop`, '= 1'],
      ]),
    ),
  );
} finally {
  await edge.stop();
  agent.destroy();
  peerAgent.destroy();
  peer.process.kill('SIGTERM');
  origin.close();
}
