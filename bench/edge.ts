// The image edge against the peers it must approach (issue 21), measured side by side in one
// run, the edge in its own process (start:edge) on PostgreSQL with its access log on:
// - hit: CPU per request serving one cached variant <= 2x nginx (Debian, one worker) serving
//   the same bytes as a static file, all under wrk; req/s beside it; and against the floor of
//   any Node answer, a bare node:http server answering the bytes from memory; over HTTP, then
//   over HTTPS (the origin's custom domain localhost, a self-signed certificate made by openssl);
// - miss: CPU per request <= 1.05x a bare sharp server fetching from the same origin
//   (peers/sharp-server.mjs), for 1, 6 and 24 MP JPEG to WebP and 6 MP to PNG and AVIF, every
//   width different so that no cache helps; each round runs every case, the edge and the peer
//   taking turns to go first, and a case's ratio is the median of its rounds' ratios, so that
//   machine noise and what one case leaves in a process fall on both alike. Beside them, a
//   2400x16 strip (`strip`, no target): next to no pixels, so its CPU is each side's fixed cost
//   of a miss; and `distinct` (no target), the 1 MP JPEG to 400 px WebP with every request for
//   an original of its own (the same file under a name of its own), as a site's many images each
//   asked for once: the edge fetches each and may hold it for widths that never come. Each
//   case's CPU on the JavaScript thread alone is reported too (`mainThreadMs`): whether a gap
//   lies in JavaScript or below it;
// - peak RSS over those misses (concurrency 8) <= 1.3x the peer's;
// - overload: at concurrency 64 what the edge cannot start in time is a 503 with Retry-After
//   (which the clients honour), and the p99 of what it accepts stays under 2x the p99 at
//   concurrency 8, with the conversions per second against those at 8 beside it;
// - workers: hit req/s with EDGE_WORKERS=1 and 2.
// RSS over a long run is bench/edge-soak.ts. BENCH_PHASES (e.g. `miss` or `miss,hit`; default
// all of miss,hit,overload,workers) and BENCH_CASES (e.g. `png,jpeg1`) run a part while iterating.
// Needs Debian's nginx and wrk. The machine's load average is reported beside the figures.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  cpuMsOf,
  getWithHost,
  mean,
  median,
  photoLike,
  portBase,
  processTree,
  quantile,
  report,
  round2,
  startEdge,
  type BenchEdge,
  waitUntil,
} from './lib.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
// The misses' rounds are short (a few seconds each), and their ratio a median over them.
const MISS_ROUNDS = Number(process.env.BENCH_MISS_ROUNDS ?? 7);
const HIT_SECONDS = Number(process.env.BENCH_DURATION ?? 5);
const PHASES = new Set((process.env.BENCH_PHASES ?? 'miss,hit,overload,workers').split(','));

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
  /** Reported without a target: not one of issue 21's cases. */
  diagnostic?: true;
  /** Every request for an original of its own: `file` under a name no request used before. */
  distinct?: true;
}

const ALL_CASES: MissCase[] = [
  // A strip of 2,400 x 16 pixels: next to no pixels to convert, so the CPU is each side's own
  // cost of a miss (the request, the origin's fetch, the answer; the edge's cache and metering).
  {
    name: 'strip',
    file: 'strip.jpg',
    size: [2400, 16],
    params: 'f=webp,q=80',
    format: 'webp',
    perRound: 96,
    diagnostic: true,
  },
  { name: 'jpeg1', file: 'p1.jpg', size: [1224, 816], params: 'f=webp,q=80', format: 'webp', perRound: 48 },
  {
    name: 'distinct',
    file: 'p1.jpg',
    size: [1224, 816],
    params: 'f=webp,q=80',
    format: 'webp',
    perRound: 48,
    diagnostic: true,
    distinct: true,
  },
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
const CASES = process.env.BENCH_CASES
  ? ALL_CASES.filter((c) => process.env.BENCH_CASES!.split(',').includes(c.name))
  : ALL_CASES;

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
/**
 * nginx serving `root` as static files, over HTTP on `port` and over HTTPS on `tlsPort` with the
 * certificate for localhost.
 */
async function startNginx(
  root: string,
  tls: LocalhostTls,
): Promise<{ port: number; tlsPort: number; process: ChildProcess }> {
  const port = portBase();
  const tlsPort = port + 1;
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
  server {
    listen 127.0.0.1:${tlsPort} ssl;
    ssl_certificate ${tls.certificateFile};
    ssl_certificate_key ${tls.privateKeyFile};
    root ${root};
  }
}
`,
  );
  const child = spawn('nginx', ['-p', prefix, '-c', conf, '-g', 'daemon off;'], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  await waitUntil(
    async () => (await getWithHost(port, 'localhost', '/origin/p1.jpg')).status === 200,
    'nginx',
  );
  return { port, tlsPort, process: child };
}

/** A self-signed certificate for localhost, by the openssl command: wrk's SNI is the URL's host. */
interface LocalhostTls {
  certificateFile: string;
  privateKeyFile: string;
  certificate: string;
  privateKey: string;
}

function localhostTls(dir: string): LocalhostTls {
  const certificateFile = join(dir, 'localhost.pem');
  const privateKeyFile = join(dir, 'localhost.key');
  const made = spawnSync('openssl', [
    ...['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'],
    ...['-keyout', privateKeyFile, '-out', certificateFile, '-days', '2'],
    ...['-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost'],
  ]);
  if (made.status !== 0) throw new Error(`openssl failed: ${made.stderr}`);
  return {
    certificateFile,
    privateKeyFile,
    certificate: readFileSync(certificateFile, 'utf8'),
    privateKey: readFileSync(privateKeyFile, 'utf8'),
  };
}

/** One of peers/*.mjs, by bare node with start:edge's environment, once `probePath` answers 200. */
async function startPeer(
  script: string,
  env: Record<string, string>,
  probePath: string,
): Promise<{ port: number; process: ChildProcess }> {
  const port = portBase();
  // BENCH_PEER_NODE_ARGS: flags for the peers' node, as BENCH_EDGE_NODE_ARGS for the edge's.
  const nodeArgs = process.env.BENCH_PEER_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  const scriptPath = fileURLToPath(new URL(`peers/${script}`, import.meta.url));
  const child = spawn(process.execPath, [...nodeArgs, scriptPath], {
    env: {
      ...process.env,
      ...env,
      PORT: String(port),
      MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? '2',
      UV_THREADPOOL_SIZE: process.env.UV_THREADPOOL_SIZE ?? '8',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  await waitUntil(async () => (await getWithHost(port, 'localhost', probePath)).status === 200, script);
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

/**
 * GETs `paths` with `concurrency` in flight, starting no new one after `seconds`; each
 * answer's status, whether it said Retry-After, and its time. A client told Retry-After waits
 * that long before its next request, as CDNs and well-behaved clients do.
 */
async function load(port: number, host: string, paths: string[], concurrency: number, seconds = Infinity) {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const answers: Array<{ status: number; ms: number; retryAfter: boolean }> = [];
  const until = performance.now() + seconds * 1000;
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < paths.length && performance.now() < until) {
        const path = paths[next++]!;
        const started = performance.now();
        const answer = await getWithHost(port, host, path, agent);
        const retryAfter = Number(answer.headers['retry-after'] ?? 0);
        answers.push({ status: answer.status, ms: performance.now() - started, retryAfter: retryAfter > 0 });
        if (retryAfter > 0) await new Promise((resolve) => setTimeout(resolve, retryAfter * 1000));
      }
    }),
  );
  agent.destroy();
  return answers;
}

const work = mkdtempSync(join(tmpdir(), 'ukiyo-bench-edge-'));
// nginx workers run as an unprivileged user when started by root.
chmodSync(work, 0o755);
mkdirSync(join(work, 'origin'));
mkdirSync(join(work, 'static'));
for (const { file, size } of ALL_CASES)
  writeFileSync(
    join(work, 'origin', file),
    await photoLike(...size)
      .jpeg({ quality: 85 })
      .toBuffer(),
  );

const tls = localhostTls(work);
const nginx = await startNginx(work, tls);
const originUrl = `http://127.0.0.1:${nginx.port}/origin`;
const peer = await startPeer('sharp-server.mjs', { ORIGIN: originUrl }, '/8/webp/p1.jpg');
const figures: Record<string, number> = { loadavg1: 0 };
let edge: BenchEdge | undefined;
/**
 * An edge serving the origin; started afresh, up to three times in all, when it did not load the
 * origin in time, which on a machine shared with other work (load average 15-25 on 2 cores) cost
 * whole runs.
 */
async function startBenchEdge(env: Record<string, string> = {}): Promise<BenchEdge> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startEdge({
        origin: { host: `127.0.0.1:${nginx.port}`, pathPrefix: 'origin' },
        probePath: '/w=10/p1.jpg',
        env,
        domain: { name: 'localhost', certificate: tls.certificate, privateKey: tls.privateKey },
      });
    } catch (error) {
      if (attempt === 3) throw error;
      console.warn(`edge start failed (${String(error)}); starting it again`);
    }
  }
}
try {
  edge = await startBenchEdge();
  const { pid, port, host } = edge;

  // Misses: every width once, on widths neither has seen (a distinct case: every original once,
  // a new name linked to its file, at 400 px); cases interleaved and turns taken as the header says.
  let width = 300;
  let linked = 0;
  const missesOf = (missCase: MissCase, count: number) =>
    Array.from({ length: count }, () => {
      if (!missCase.distinct) return { width: width++, file: missCase.file };
      const file = `${linked++}-${missCase.file}`;
      symlinkSync(missCase.file, join(work, 'origin', file));
      return { width: 400, file };
    });
  type Miss = ReturnType<typeof missesOf>[number];
  const missCases = PHASES.has('miss') ? CASES : [];
  const edgePaths = (missCase: MissCase, misses: Miss[]) =>
    misses.map((miss) => `/w=${miss.width},${missCase.params}/${miss.file}`);
  const peerPaths = (missCase: MissCase, misses: Miss[]) =>
    misses.map((miss) => `/${miss.width}/${missCase.format}/${miss.file}`);
  /**
   * CPU ms per conversion of `paths` through one server, which must answer every one 200: all
   * of it, and its JavaScript thread's part (the rest is libvips and the thread pool).
   */
  type MissCpu = { all: number; main: number };
  const missCpuMs = async (
    server: { pid: number; port: number; host: string },
    paths: string[],
  ): Promise<MissCpu> => {
    const mainThread = () => cpuMsOf(server.pid, { thread: server.pid });
    const before = { all: cpuOfTree(server.pid), main: mainThread() };
    const answers = await load(server.port, server.host, paths, 8);
    if (answers.some((answer) => answer.status !== 200)) throw new Error(`miss failed: ${paths[0]}`);
    return {
      all: (cpuOfTree(server.pid) - before.all) / paths.length,
      main: (mainThread() - before.main) / paths.length,
    };
  };
  const peerServer = { pid: peer.process.pid!, port: peer.port, host: 'localhost' };
  const cpu = new Map(
    missCases.map((missCase) => [missCase, { edge: [] as MissCpu[], peer: [] as MissCpu[] }]),
  );
  // Warm-up: the code paths of both, and the origin's files in the page cache.
  for (const missCase of missCases) {
    const warm = missesOf(missCase, 8);
    await missCpuMs(edge, edgePaths(missCase, warm));
    await missCpuMs(peerServer, peerPaths(missCase, warm));
  }
  for (let round = 0; round < MISS_ROUNDS; round++) {
    for (const missCase of missCases) {
      const misses = missesOf(missCase, missCase.perRound);
      const runs = [
        async () => cpu.get(missCase)!.edge.push(await missCpuMs(edge!, edgePaths(missCase, misses))),
        async () => cpu.get(missCase)!.peer.push(await missCpuMs(peerServer, peerPaths(missCase, misses))),
      ];
      for (const run of round % 2 === 0 ? runs : runs.reverse()) await run();
    }
  }
  for (const [missCase, { edge: edgeCpu, peer: peerCpu }] of cpu) {
    figures[`miss_${missCase.name}_cpuMs`] = round2(mean(edgeCpu.map((ms) => ms.all)));
    figures[`miss_${missCase.name}_peerCpuMs`] = round2(mean(peerCpu.map((ms) => ms.all)));
    figures[`miss_${missCase.name}_ratio`] = round2(
      median(edgeCpu.map((ms, round) => ms.all / peerCpu[round]!.all)),
    );
    // Diagnostic: where a gap lies, in JavaScript or below it.
    figures[`miss_${missCase.name}_mainThreadMs`] = round2(mean(edgeCpu.map((ms) => ms.main)));
    figures[`miss_${missCase.name}_peerMainThreadMs`] = round2(mean(peerCpu.map((ms) => ms.main)));
  }
  if (PHASES.has('miss')) {
    figures.peakRssMb = peakRssMb(pid);
    figures.peerPeakRssMb = peakRssMb(peer.process.pid!);
    figures.peakRssRatio = round2(figures.peakRssMb / figures.peerPeakRssMb);
  }

  // Hits: one variant from the edge's cache; the same bytes as a static file from nginx, and
  // from memory by a bare Node server (the floor of any Node answer). Over HTTP, then over HTTPS
  // to the origin's custom domain, localhost (TLS 1.3, each keep-alive connection's handshake
  // once).
  const hitPath = '/w=400,f=webp,q=80/p6.jpg';
  if (PHASES.has('hit')) {
    const variant = await edge.get(hitPath);
    writeFileSync(join(work, 'static', 'variant.webp'), variant.body);
    const floor = await startPeer(
      'node-static.mjs',
      { FILE: join(work, 'static', 'variant.webp'), CERT: tls.certificateFile, KEY: tls.privateKeyFile },
      '/',
    );
    const runs = {
      edge: () => hammer(`http://127.0.0.1:${port}${hitPath}`, host, pid),
      nginx: () => hammer(`http://127.0.0.1:${nginx.port}/static/variant.webp`, null, nginx.process.pid!),
      floor: () => hammer(`http://127.0.0.1:${floor.port}/`, null, floor.process.pid!),
      edgeTls: () => hammer(`https://localhost:${edge!.tlsPort}${hitPath}`, null, pid),
      nginxTls: () =>
        hammer(`https://localhost:${nginx.tlsPort}/static/variant.webp`, null, nginx.process.pid!),
      floorTls: () => hammer(`https://localhost:${floor.port + 1}/`, null, floor.process.pid!),
    };
    type Run = keyof typeof runs;
    const hits = Object.fromEntries(Object.keys(runs).map((name) => [name, []])) as unknown as Record<
      Run,
      ReturnType<typeof hammer>[]
    >;
    for (let round = -1; round < ROUNDS; round++) {
      // Round -1 warms up.
      for (const [name, run] of Object.entries(runs)) {
        const result = run();
        if (round >= 0) hits[name as Run].push(result);
      }
    }
    floor.process.kill('SIGTERM');
    const cpuMs = (name: Run) => Math.round(mean(hits[name].map((h) => h.cpuMsPerRequest)) * 1000) / 1000;
    const rps = (name: Run) => Math.round(mean(hits[name].map((h) => h.rps)));
    for (const [prefix, suffix] of [
      ['hit', ''],
      ['hit_tls', 'Tls'],
    ] as const) {
      figures[`${prefix}_cpuMs`] = cpuMs(`edge${suffix}`);
      figures[`${prefix}_nginxCpuMs`] = cpuMs(`nginx${suffix}`);
      figures[`${prefix}_nodeFloorCpuMs`] = cpuMs(`floor${suffix}`);
      figures[`${prefix}_cpuRatio`] = round2(cpuMs(`edge${suffix}`) / cpuMs(`nginx${suffix}`));
      figures[`${prefix}_nodeFloorRatio`] = round2(cpuMs(`edge${suffix}`) / cpuMs(`floor${suffix}`));
      figures[`${prefix}_rps`] = rps(`edge${suffix}`);
      figures[`${prefix}_nginxRps`] = rps(`nginx${suffix}`);
    }
    figures.variantBytes = variant.body.length;
  }

  // Overload: the same misses at concurrency 8, then 64, for 15 seconds each. A background
  // colour, which an opaque picture never shows, makes each a variant of its own.
  if (PHASES.has('overload')) {
    let serial = 0;
    const timed = async (concurrency: number, seconds: number) => {
      const paths = Array.from(
        { length: 20_000 },
        () => `/w=400,f=webp,q=80,b=${(serial++).toString(16).padStart(6, '0')}/p6.jpg`,
      );
      const started = performance.now();
      const answers = await load(port, host, paths, concurrency, seconds);
      return { answers, seconds: (performance.now() - started) / 1000 };
    };
    const { answers: c8, seconds: c8Seconds } = await timed(8, 15);
    const { answers: c64, seconds: c64Seconds } = await timed(64, 15);
    const accepted = c64.filter((answer) => answer.status === 200);
    const shed = c64.filter((answer) => answer.status === 503);
    if (accepted.length + shed.length !== c64.length || shed.some((answer) => !answer.retryAfter))
      throw new Error('overload answered other than 200 or 503 with Retry-After');
    figures.c8_p99Ms = Math.round(
      quantile(
        c8.map((answer) => answer.ms),
        0.99,
      ),
    );
    figures.c64_p99Ms = Math.round(
      quantile(
        accepted.map((answer) => answer.ms),
        0.99,
      ),
    );
    figures.c64_p99Ratio = round2(figures.c64_p99Ms / figures.c8_p99Ms);
    figures.c64_goodputRatio = round2(accepted.length / c64Seconds / (c8.length / c8Seconds));
  }

  await edge.stop();
  edge = undefined;

  // Workers: hit throughput of one and of two edge processes sharing the port and the cache.
  for (const workers of PHASES.has('workers') ? [1, 2] : []) {
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
    hit_tls_cpuRatio: '<= 2',
    ...Object.fromEntries(CASES.filter((c) => !c.diagnostic).map((c) => [`miss_${c.name}_ratio`, '<= 1.05'])),
    peakRssRatio: '<= 1.3',
    c64_p99Ratio: '< 2',
    c64_goodputRatio: '~1',
  });
} finally {
  await edge?.stop();
  peer.process.kill('SIGTERM');
  nginx.process.kill('SIGTERM');
}
