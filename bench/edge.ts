// The image edge against the peers it must approach (issue 21), measured side by side in one
// run, the edge in its own process (start:edge) on PostgreSQL with its access log on:
// - hit: CPU per request serving one cached variant <= 2x nginx (Debian, one worker) serving
//   the same bytes as a static file, both under wrk; req/s beside it;
// - miss: CPU per request <= 1.05x a bare sharp server fetching from the same origin
//   (peers/sharp-server.mjs), for 1, 6 and 24 MP JPEG to WebP and 6 MP to PNG and AVIF, every
//   width different so that no cache helps; rounds alternate between the edge and the peer so
//   that machine noise hits both alike;
// - peak RSS over those misses (concurrency 8) <= 1.3x the peer's;
// - overload: at concurrency 64 what the edge cannot start in time is a 503 with Retry-After,
//   and the p99 of what it accepts stays under 2x the p99 at concurrency 8;
// - workers: hit req/s with EDGE_WORKERS=1 and 2;
// - with BENCH_SOAK_SECONDS (600 for the figure): RSS over a run of misses at
//   concurrency 32, first minute against last.
// Needs Debian's nginx and wrk. The machine's load average is reported beside the figures.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  cpuMsOf,
  getWithHost,
  mean,
  photoLike,
  portBase,
  processTree,
  report,
  round2,
  startEdge,
  type BenchEdge,
} from './lib.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const HIT_SECONDS = Number(process.env.BENCH_DURATION ?? 5);
const SOAK_SECONDS = Number(process.env.BENCH_SOAK_SECONDS ?? 0);

for (const command of ['nginx', 'wrk'])
  if (spawnSync('sh', ['-c', `command -v ${command}`]).status !== 0)
    throw new Error(`bench/edge needs ${command}: apt-get install nginx wrk`);

interface MissCase {
  name: string;
  file: string;
  size: [number, number];
  /** The edge's parameters after w=, and the peer's format. */
  params: string;
  format: 'webp' | 'png' | 'avif';
  perRound: number;
}

const CASES: MissCase[] = [
  { name: 'jpeg1', file: 'p1.jpg', size: [1224, 816], params: 'f=webp,q=80', format: 'webp', perRound: 48 },
  { name: 'jpeg6', file: 'p6.jpg', size: [3000, 2000], params: 'f=webp,q=80', format: 'webp', perRound: 32 },
  {
    name: 'jpeg24',
    file: 'p24.jpg',
    size: [6000, 4000],
    params: 'f=webp,q=80',
    format: 'webp',
    perRound: 12,
  },
  { name: 'png', file: 'p6.jpg', size: [3000, 2000], params: 'f=png', format: 'png', perRound: 24 },
  // q=75 is AVIF quality 50 at effort 3 on the edge (render.ts), as the peer encodes.
  { name: 'avif', file: 'p6.jpg', size: [3000, 2000], params: 'f=avif,q=75', format: 'avif', perRound: 16 },
];

const cpuOfTree = (pid: number) => processTree(pid).reduce((sum, each) => sum + cpuMsOf(each), 0);
const peakRssMb = (pid: number) =>
  Math.round(
    processTree(pid)
      .map((each) => {
        const line = readFileSync(`/proc/${each}/status`, 'utf8')
          .split('\n')
          .find((l) => l.startsWith('VmHWM:'))!;
        return Number(line.split(/\s+/)[1]) / 1024;
      })
      .reduce((a, b) => a + b, 0),
  );
const rssMb = (pid: number) =>
  Math.round(
    processTree(pid)
      .map((each) => Number(readFileSync(`/proc/${each}/statm`, 'utf8').split(' ')[1]) * 4096)
      .reduce((a, b) => a + b, 0) /
      1024 ** 2,
  );

async function waitUntil(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    if (await check().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${what} did not start`);
}

async function startNginx(root: string): Promise<{ port: number; process: ChildProcess }> {
  const port = portBase();
  const prefix = mkdtempSync(join(tmpdir(), 'ukiyo-nginx-'));
  const conf = join(prefix, 'nginx.conf');
  writeFileSync(
    conf,
    `worker_processes 1;
pid ${prefix}/nginx.pid;
error_log stderr warn;
events { worker_connections 1024; }
http {
  access_log off;
  sendfile on;
  tcp_nopush on;
  keepalive_requests 1000000;
  types { image/webp webp; image/jpeg jpg; }
  client_body_temp_path ${prefix}/body;
  proxy_temp_path ${prefix}/proxy;
  fastcgi_temp_path ${prefix}/fastcgi;
  uwsgi_temp_path ${prefix}/uwsgi;
  scgi_temp_path ${prefix}/scgi;
  server { listen 127.0.0.1:${port}; root ${root}; }
}
`,
  );
  const child = spawn('nginx', ['-p', prefix, '-c', conf, '-g', 'daemon off;'], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  await waitUntil(async () => (await getWithHost(port, 'localhost', '/')).status > 0, 'nginx');
  return { port, process: child };
}

async function startSharpPeer(originUrl: string): Promise<{ port: number; process: ChildProcess }> {
  const port = portBase();
  const child = spawn(process.execPath, [fileURLToPath(new URL('peers/sharp-server.mjs', import.meta.url))], {
    env: {
      ...process.env,
      PORT: String(port),
      ORIGIN: originUrl,
      // As start:edge runs the edge.
      MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? '2',
      UV_THREADPOOL_SIZE: process.env.UV_THREADPOOL_SIZE ?? '8',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  await waitUntil(
    async () => (await getWithHost(port, 'localhost', '/8/webp/p1.jpg')).status === 200,
    'sharp peer',
  );
  return { port, process: child };
}

/** wrk against one URL: requests per second and the CPU ms per request of `pid`'s tree. */
function hammer(url: string, host: string | null, pid: number, connections = 8) {
  const before = cpuOfTree(pid);
  const run = spawnSync(
    'wrk',
    ['-t1', `-c${connections}`, `-d${HIT_SECONDS}s`, ...(host ? ['-H', `Host: ${host}`] : []), url],
    { encoding: 'utf8' },
  );
  const cpuMs = cpuOfTree(pid) - before;
  const requests = Number(/(\d+) requests in/.exec(run.stdout)?.[1]);
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(run.stdout)?.[1]);
  if (run.status !== 0 || !requests || /Non-2xx|Socket errors/.test(run.stdout))
    throw new Error(`wrk failed: ${run.stdout}${run.stderr}`);
  return { rps, cpuMsPerRequest: cpuMs / requests };
}

/** GETs `paths` with `concurrency` in flight; each answer's status, headers and time. */
async function load(port: number, host: string, paths: string[], concurrency: number) {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const answers: Array<{ status: number; ms: number; retryAfter: boolean }> = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < paths.length) {
        const path = paths[next++]!;
        const started = performance.now();
        const answer = await getWithHost(port, host, path, agent);
        answers.push({
          status: answer.status,
          ms: performance.now() - started,
          retryAfter: answer.headers['retry-after'] !== undefined,
        });
      }
    }),
  );
  agent.destroy();
  return answers;
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? 0;
};

const work = mkdtempSync(join(tmpdir(), 'ukiyo-bench-edge-'));
// nginx workers run as an unprivileged user when started by root.
chmodSync(work, 0o755);
mkdirSync(join(work, 'origin'));
mkdirSync(join(work, 'static'));
for (const { file, size } of CASES)
  writeFileSync(
    join(work, 'origin', file),
    await photoLike(...size)
      .jpeg({ quality: 85 })
      .toBuffer(),
  );

const nginx = await startNginx(work);
const originUrl = `http://127.0.0.1:${nginx.port}/origin`;
const peer = await startSharpPeer(originUrl);
const figures: Record<string, number> = { loadavg1: 0 };
let edge: BenchEdge | undefined;
const startBenchEdge = (env: Record<string, string> = {}) =>
  startEdge({
    origin: { host: `127.0.0.1:${nginx.port}`, pathPrefix: 'origin' },
    probePath: '/w=10/p1.jpg',
    env,
  });
try {
  edge = await startBenchEdge();
  const { pid, port, host } = edge;

  // Misses: every width once, edge and peer alternating, each on widths neither has seen.
  let width = 300;
  const widths = (count: number) => Array.from({ length: count }, () => width++);
  for (const missCase of CASES) {
    const edgeCpu: number[] = [];
    const peerCpu: number[] = [];
    const edgePaths = (ws: number[]) => ws.map((w) => `/w=${w},${missCase.params}/${missCase.file}`);
    const peerPaths = (ws: number[]) => ws.map((w) => `/${w}/${missCase.format}/${missCase.file}`);
    // Warm-up: the code paths of both, and the origin's file in the page cache.
    const warm = widths(8);
    await load(port, host, edgePaths(warm), 8);
    await load(peer.port, 'localhost', peerPaths(warm), 8);
    for (let round = 0; round < ROUNDS; round++) {
      const ws = widths(missCase.perRound);
      let before = cpuOfTree(pid);
      const answers = await load(port, host, edgePaths(ws), 8);
      if (answers.some((answer) => answer.status !== 200))
        throw new Error(`edge miss failed: ${missCase.name}`);
      edgeCpu.push((cpuOfTree(pid) - before) / ws.length);
      before = cpuOfTree(peer.process.pid!);
      await load(peer.port, 'localhost', peerPaths(ws), 8);
      peerCpu.push((cpuOfTree(peer.process.pid!) - before) / ws.length);
    }
    figures[`miss_${missCase.name}_cpuMs`] = round2(mean(edgeCpu));
    figures[`miss_${missCase.name}_peerCpuMs`] = round2(mean(peerCpu));
    figures[`miss_${missCase.name}_ratio`] = round2(mean(edgeCpu) / mean(peerCpu));
  }
  figures.peakRssMb = peakRssMb(pid);
  figures.peerPeakRssMb = peakRssMb(peer.process.pid!);
  figures.peakRssRatio = round2(figures.peakRssMb / figures.peerPeakRssMb);

  // Hits: one variant from the edge's cache, and the same bytes as a static file from nginx.
  const hitPath = '/w=400,f=webp,q=80/p6.jpg';
  const variant = await edge.get(hitPath);
  writeFileSync(join(work, 'static', 'variant.webp'), variant.body);
  const edgeHit = () => hammer(`http://127.0.0.1:${port}${hitPath}`, host, pid);
  const nginxHit = () =>
    hammer(`http://127.0.0.1:${nginx.port}/static/variant.webp`, null, nginx.process.pid!);
  edgeHit();
  nginxHit(); // warm-up
  const hits = { edge: [] as ReturnType<typeof hammer>[], nginx: [] as ReturnType<typeof hammer>[] };
  for (let round = 0; round < ROUNDS; round++) {
    hits.edge.push(edgeHit());
    hits.nginx.push(nginxHit());
  }
  figures.hit_cpuMs = Math.round(mean(hits.edge.map((h) => h.cpuMsPerRequest)) * 1000) / 1000;
  figures.hit_nginxCpuMs = Math.round(mean(hits.nginx.map((h) => h.cpuMsPerRequest)) * 1000) / 1000;
  figures.hit_cpuRatio = round2(figures.hit_cpuMs / figures.hit_nginxCpuMs);
  figures.hit_rps = Math.round(mean(hits.edge.map((h) => h.rps)));
  figures.hit_nginxRps = Math.round(mean(hits.nginx.map((h) => h.rps)));
  figures.variantBytes = variant.body.length;

  // Overload: the same misses at concurrency 8, then 64.
  const c8 = await load(
    port,
    host,
    widths(48).map((w) => `/w=${w},f=webp,q=80/p6.jpg`),
    8,
  );
  const c64 = await load(
    port,
    host,
    widths(320).map((w) => `/w=${w},f=webp,q=80/p6.jpg`),
    64,
  );
  const accepted = c64.filter((answer) => answer.status === 200);
  const shed = c64.filter((answer) => answer.status === 503);
  if (accepted.length + shed.length !== c64.length || shed.some((answer) => !answer.retryAfter))
    throw new Error('overload answered other than 200 or 503 with Retry-After');
  figures.c8_p99Ms = Math.round(
    percentile(
      c8.map((answer) => answer.ms),
      99,
    ),
  );
  figures.c64_p99Ms = Math.round(
    percentile(
      accepted.map((answer) => answer.ms),
      99,
    ),
  );
  figures.c64_p99Ratio = round2(figures.c64_p99Ms / figures.c8_p99Ms);
  figures.c64_shedShare = round2(shed.length / c64.length);

  if (SOAK_SECONDS > 0) {
    const samples: Array<{ at: number; rss: number }> = [];
    const started = Date.now();
    const sampler = setInterval(() => samples.push({ at: Date.now() - started, rss: rssMb(pid) }), 5_000);
    while (Date.now() - started < SOAK_SECONDS * 1000)
      await load(
        port,
        host,
        widths(320).map((w) => `/w=${w % 1000},h=${Math.floor(w / 1000)},f=webp/p1.jpg`),
        32,
      );
    clearInterval(sampler);
    const minute = (from: number) =>
      samples.filter((s) => s.at >= from && s.at < from + 60_000).map((s) => s.rss);
    figures.soakFirstMinuteRssMb = Math.max(...minute(0));
    figures.soakLastMinuteRssMb = Math.max(...minute(SOAK_SECONDS * 1000 - 60_000));
    figures.soakGrowth = round2(figures.soakLastMinuteRssMb / figures.soakFirstMinuteRssMb);
  }
  await edge.stop();
  edge = undefined;

  // Workers: hit throughput of one and of two edge processes sharing the port and the cache.
  for (const workers of [1, 2]) {
    edge = await startBenchEdge({ EDGE_WORKERS: String(workers) });
    await edge.get(hitPath);
    const url = `http://127.0.0.1:${edge.port}${hitPath}`;
    hammer(url, edge.host, edge.pid, 16);
    figures[`workers${workers}_hitRps`] = Math.round(hammer(url, edge.host, edge.pid, 16).rps);
    await edge.stop();
    edge = undefined;
  }
  figures.loadavg1 = round2(loadavg()[0]!);

  report('edge', figures, {
    hit_cpuRatio: '<= 2',
    ...Object.fromEntries(CASES.map((c) => [`miss_${c.name}_ratio`, '<= 1.05'])),
    peakRssRatio: '<= 1.3',
    c64_p99Ratio: '< 2',
    ...(SOAK_SECONDS > 0 ? { soakGrowth: '~1' } : {}),
  });
} finally {
  await edge?.stop();
  peer.process.kill('SIGTERM');
  nginx.process.kill('SIGTERM');
}
