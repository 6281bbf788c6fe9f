// The image edge against the two things it must approach (issue 4), in one interleaved run:
// - miss: CPU per request of `npm start`'s process turning a 2000x1500 JPEG into a w=~400 WebP
//   q80 (every width different, so no cache helps) <= 1.10x a bare sharp script doing the same;
// - hit: req/s serving one cached variant >= 0.8x nginx (Debian, one worker like the one Node
//   thread) serving the same bytes as a static file;
// - peak RSS of the process <= 250 MB at concurrency 8. Embedded PGlite alone takes ~850 MB
//   of RSS, so the process runs as in production, on PostgreSQL: DATABASE_URL when set, else
//   a throw-away local server (Debian's postgresql binaries).
// Rounds alternate between the edge and its reference so that machine noise hits both alike.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import sharp from 'sharp';
import {
  cpuMsOf,
  getWithHost,
  mean,
  photoLike,
  pool,
  portBase,
  report,
  round2,
  startEdge,
  type BenchEdge,
} from './lib.ts';

const CONCURRENCY = 8;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const MISSES_PER_ROUND = Number(process.env.BENCH_MISSES ?? 40);
const HIT_SECONDS = Number(process.env.BENCH_DURATION ?? 5);

// The reference for a miss: the same transform with nothing around it, in its own process.
if (process.argv[2] === 'bare') {
  const input = readFileSync(process.argv[3]!);
  const widths = JSON.parse(process.argv[4]!) as number[];
  const convert = (width: number) => sharp(input).resize({ width }).webp({ quality: 80 }).toBuffer();
  for (const width of [200, 201, 202]) await convert(width);
  const before = process.cpuUsage();
  await pool(widths, CONCURRENCY, async (width) => {
    await convert(width);
  });
  const used = process.cpuUsage(before);
  process.stdout.write(JSON.stringify({ cpuMs: (used.user + used.system) / 1000 }));
  process.exit(0);
}

function peakRssMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmHWM:'))!;
  return Math.round(Number(line.split(/\s+/)[1]) / 1024);
}

const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });

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
  for (let attempt = 0; attempt < 100; attempt++) {
    try {
      await getWithHost(port, 'localhost', '/', agent);
      return { port, process: child };
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  child.kill();
  throw new Error('nginx did not start');
}

const work = mkdtempSync(join(tmpdir(), 'ukiyo-bench-edge-'));
// nginx workers run as an unprivileged user when started by root.
chmodSync(work, 0o755);
mkdirSync(join(work, 'origin'));
mkdirSync(join(work, 'static'));
const inputPath = join(work, 'origin', 'photo.jpg');
const input = await photoLike(2000, 1500).jpeg({ quality: 85 }).toBuffer();
writeFileSync(inputPath, input);

const nginx = await startNginx(work);
let edge: BenchEdge | undefined;
try {
  // Inside the try: nginx stops whether or not the edge starts.
  edge = await startEdge({
    origin: { host: `127.0.0.1:${nginx.port}`, pathPrefix: 'origin' },
    probePath: '/w=10/photo.jpg',
    postgres: true,
    agent,
    env: { DEMO: '1' },
  });
  const { pid, get, port, host } = edge;

  // Misses: edge and bare sharp alternate, each round on widths nobody has asked for before.
  let width = 300;
  const edgeMissCpu: number[] = [];
  const bareMissCpu: number[] = [];
  const nextWidths = () => Array.from({ length: MISSES_PER_ROUND }, () => width++);
  await pool(nextWidths(), CONCURRENCY, async (w) => {
    await get(`/w=${w},f=webp,q=80/photo.jpg`);
  }); // warm-up
  for (let round = 0; round < ROUNDS; round++) {
    const widths = nextWidths();
    const before = cpuMsOf(pid);
    await pool(widths, CONCURRENCY, async (w) => {
      const answer = await get(`/w=${w},f=webp,q=80/photo.jpg`);
      if (answer.status !== 200) throw new Error(`edge answered ${answer.status}`);
    });
    edgeMissCpu.push((cpuMsOf(pid) - before) / widths.length);
    const bare = spawnSync(
      process.execPath,
      ['--import', 'tsx', fileURLToPath(import.meta.url), 'bare', inputPath, JSON.stringify(widths)],
      {
        encoding: 'utf8',
      },
    );
    if (bare.status !== 0) throw new Error(`bare sharp failed: ${bare.stderr}`);
    bareMissCpu.push((JSON.parse(bare.stdout) as { cpuMs: number }).cpuMs / widths.length);
  }

  // Hits: one variant, from the edge's cache and as a static file from nginx.
  const hitPath = '/w=400,f=webp,q=80/photo.jpg';
  const variant = await get(hitPath);
  writeFileSync(join(work, 'static', 'variant.webp'), variant.body);
  const hammer = (url: string, headers: Record<string, string>) =>
    autocannon({ url, headers, connections: CONCURRENCY, duration: HIT_SECONDS });
  const edgeHit = () => hammer(`http://127.0.0.1:${port}${hitPath}`, { host });
  const nginxHit = () => hammer(`http://127.0.0.1:${nginx.port}/static/variant.webp`, {});
  await edgeHit();
  await nginxHit(); // warm-up
  const edgeRps: number[] = [];
  const nginxRps: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const e = await edgeHit();
    const n = await nginxHit();
    if (e.non2xx > 0 || e.errors > 0 || n.non2xx > 0 || n.errors > 0) throw new Error('hit run had failures');
    edgeRps.push(e.requests.average);
    nginxRps.push(n.requests.average);
  }

  report(
    'edge',
    {
      missCpuMsPerRequest: round2(mean(edgeMissCpu)),
      bareSharpCpuMsPerRequest: round2(mean(bareMissCpu)),
      missCpuRatio: round2(mean(edgeMissCpu) / mean(bareMissCpu)),
      hitRequestsPerSecond: Math.round(mean(edgeRps)),
      nginxRequestsPerSecond: Math.round(mean(nginxRps)),
      hitRatio: round2(mean(edgeRps) / mean(nginxRps)),
      variantBytes: variant.body.length,
      peakRssMb: peakRssMb(pid),
    },
    { missCpuRatio: '<= 1.10', hitRatio: '>= 0.8', peakRssMb: '<= 250' },
  );
} finally {
  await edge?.stop();
  agent.destroy();
  nginx.process.kill('SIGTERM');
}
