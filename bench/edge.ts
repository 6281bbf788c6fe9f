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
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import sharp from 'sharp';
import { createOrigin, report, startServer } from './lib.ts';

const CONCURRENCY = 8;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const MISSES_PER_ROUND = Number(process.env.BENCH_MISSES ?? 40);
const HIT_SECONDS = Number(process.env.BENCH_DURATION ?? 5);

/** Runs `task` over `items` with at most CONCURRENCY in flight. */
async function pool<T>(items: readonly T[], task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < items.length) await task(items[next++]!);
    }),
  );
}

// The reference for a miss: the same transform with nothing around it, in its own process.
if (process.argv[2] === 'bare') {
  const input = readFileSync(process.argv[3]!);
  const widths = JSON.parse(process.argv[4]!) as number[];
  const convert = (width: number) => sharp(input).resize({ width }).webp({ quality: 80 }).toBuffer();
  for (const width of [200, 201, 202]) await convert(width);
  const before = process.cpuUsage();
  await pool(widths, async (width) => {
    await convert(width);
  });
  const used = process.cpuUsage(before);
  process.stdout.write(JSON.stringify({ cpuMs: (used.user + used.system) / 1000 }));
  process.exit(0);
}

const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK']).stdout.toString().trim() || 100);

function cpuMsOf(pid: number): number {
  // utime and stime, fields 14 and 15, after the parenthesised command name.
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
}

function peakRssMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmHWM:'))!;
  return Math.round(Number(line.split(/\s+/)[1]) / 1024);
}

const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
function get(port: number, host: string, path: string): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent, headers: { host } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function startNginx(root: string): Promise<{ port: number; process: ChildProcess }> {
  const port = 20000 + Math.floor(Math.random() * 20000);
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
      await get(port, 'localhost', '/');
      return { port, process: child };
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  child.kill();
  throw new Error('nginx did not start');
}

async function startPostgres(): Promise<{ url: string; process: ChildProcess | null }> {
  if (process.env.DATABASE_URL) return { url: process.env.DATABASE_URL, process: null };
  const dir = mkdtempSync(join(tmpdir(), 'ukiyo-bench-pg-'));
  chmodSync(dir, 0o777);
  // initdb and postgres refuse to run as root.
  const as = process.getuid?.() === 0 ? ['runuser', '-u', 'postgres', '--'] : [];
  const run = (command: string, args: string[]) => [...as, command, ...args];
  const [initCommand, ...initArgs] = run('initdb', [
    '-D',
    join(dir, 'data'),
    '-U',
    'postgres',
    '--auth=trust',
  ]);
  const init = spawnSync(initCommand!, initArgs, { encoding: 'utf8' });
  if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr}`);
  const port = 20000 + Math.floor(Math.random() * 20000);
  const [command, ...args] = run('postgres', [
    '-D',
    join(dir, 'data'),
    '-p',
    String(port),
    '-k',
    dir,
    '-h',
    '127.0.0.1',
  ]);
  // Its own process group, so stopping it reaches postgres itself and not just runuser.
  const child = spawn(command!, args, { stdio: 'ignore', detached: true });
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  for (let attempt = 0; attempt < 200; attempt++) {
    const client = new pg.Client({ connectionString: url });
    try {
      await client.connect();
      await client.end();
      return { url, process: child };
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  child.kill();
  throw new Error('postgres did not start');
}

const work = mkdtempSync(join(tmpdir(), 'ukiyo-bench-edge-'));
// nginx workers run as an unprivileged user when started by root.
chmodSync(work, 0o755);
mkdirSync(join(work, 'origin'));
mkdirSync(join(work, 'static'));
const inputPath = join(work, 'origin', 'photo.jpg');
// Noise softened by a blur: closer to a photograph's detail than a flat colour.
const input = await sharp({
  create: {
    width: 2000,
    height: 1500,
    channels: 3,
    background: '#808080',
    noise: { type: 'gaussian', mean: 128, sigma: 60 },
  },
})
  .blur(2)
  .jpeg({ quality: 85 })
  .toBuffer();
writeFileSync(inputPath, input);

const nginx = await startNginx(work);
const postgres = await startPostgres();
const edgePort = 20000 + Math.floor(Math.random() * 20000);
const EMAIL = 'bench@example.com';
const PASSWORD = 'bench-password-123';
const server = await startServer({
  BOOTSTRAP_ADMIN_EMAIL: EMAIL,
  BOOTSTRAP_ADMIN_PASSWORD: PASSWORD,
  DEMO: '1',
  EDGE_PORT: String(edgePort),
  ALLOW_PRIVATE_ORIGINS: '1',
  DATABASE_URL: postgres.url,
});
const pid = server.process.pid!;
try {
  const host = await createOrigin(
    server.url,
    { email: EMAIL, password: PASSWORD },
    { host: `127.0.0.1:${nginx.port}`, pathPrefix: 'origin' },
    async (candidate) => (await get(edgePort, candidate, '/w=10/photo.jpg')).status === 200,
  );

  // Misses: edge and bare sharp alternate, each round on widths nobody has asked for before.
  let width = 300;
  const edgeMissCpu: number[] = [];
  const bareMissCpu: number[] = [];
  const nextWidths = () => Array.from({ length: MISSES_PER_ROUND }, () => width++);
  await pool(nextWidths(), async (w) => {
    await get(edgePort, host, `/w=${w},f=webp,q=80/photo.jpg`);
  }); // warm-up
  for (let round = 0; round < ROUNDS; round++) {
    const widths = nextWidths();
    const before = cpuMsOf(pid);
    await pool(widths, async (w) => {
      const answer = await get(edgePort, host, `/w=${w},f=webp,q=80/photo.jpg`);
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
  const variant = await get(edgePort, host, hitPath);
  writeFileSync(join(work, 'static', 'variant.webp'), variant.body);
  const hammer = (url: string, headers: Record<string, string>) =>
    autocannon({ url, headers, connections: CONCURRENCY, duration: HIT_SECONDS });
  const edgeHit = () => hammer(`http://127.0.0.1:${edgePort}${hitPath}`, { host });
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

  const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
  const round2 = (value: number) => Math.round(value * 100) / 100;
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
  agent.destroy();
  server.process.kill('SIGTERM');
  nginx.process.kill('SIGTERM');
  if (postgres.process?.pid) process.kill(-postgres.process.pid, 'SIGINT');
}
