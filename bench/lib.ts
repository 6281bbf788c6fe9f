import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  writeFileSync,
} from 'node:fs';
import { once } from 'node:events';
import { createServer, request, type Agent, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import sharp, { type Sharp } from 'sharp';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));

// A bench that fails leaves no process behind (an edge, a peer, nginx, a publisher holding its
// ports for the next run): its children end with it.
process.on('exit', () => spawnSync('pkill', ['-TERM', '-P', String(process.pid)]));

/** Ports a process of the bench may take: each process gets PORTS_PER_PROCESS of them. */
const PORTS_PER_PROCESS = 10;
let nextPort = 10_000 + PORTS_PER_PROCESS * Math.floor(Math.random() * 2_000);

/**
 * A port for a process of the bench, with a few free ones after it: below Linux's ephemeral
 * range (32768 and up), where the machine's own outgoing connections would collide with it.
 * One run takes them in turn from a random start, so that its own processes never share one.
 */
export function portBase(): number {
  const port = nextPort;
  nextPort = port + PORTS_PER_PROCESS >= 32_768 ? 10_000 : port + PORTS_PER_PROCESS;
  return port;
}

/**
 * Starts `npm start`'s server process (or another server entry) on a fresh DATA_DIR and waits
 * until it answers.
 */
export async function startServer(
  env: Record<string, string>,
  entry = 'apps/all-in-one/src/main.ts',
): Promise<{ url: string; process: ChildProcess }> {
  const port = portBase();
  // BENCH_SERVER_NODE_ARGS: flags for the server's node, e.g. `--cpu-prof --cpu-prof-dir=/tmp/p`.
  const nodeArgs = process.env.BENCH_SERVER_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', entry], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATA_DIR: mkdtempSync(join(tmpdir(), 'ukiyo-bench-')),
      PORT: String(port),
      // The edge's other listeners, on free ports of their own.
      EDGE_PORT: String(port + 1),
      EDGE_TLS_PORT: String(port + 2),
      METRICS_PORT: String(port + 3),
      LIVE_PORT: String(port + 4),
      LIVE_RTMP_PORT: String(port + 5),
      LIVE_SRT_PORT: String(port + 6),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      // As `npm start` runs it: fewer glibc arenas keep libvips' threads from inflating RSS.
      MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? '2',
      // As `npm start` runs it: four transforms and the threads the edge keeps beside them.
      UV_THREADPOOL_SIZE: process.env.UV_THREADPOOL_SIZE ?? '8',
      ...env,
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  for (let attempt = 0; attempt < 300; attempt++) {
    try {
      const response = await fetch(`${url}/.ui-api/user.whoami?api-version=2.29`, {
        method: 'POST',
        headers: { 'X-Requested-With': 'XMLHttpRequest' },
      });
      if (response.ok) return { url, process: child };
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  child.kill();
  throw new Error('server did not start within 30 s');
}

/** Resolves once `check` is true (a server of the bench answering), within 10 s. */
export async function waitUntil(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    if (await check().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${what} did not start`);
}

/** Runs `task` over `items` with at most `concurrency` in flight. */
export async function pool<T>(
  items: readonly T[],
  concurrency: number,
  task: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) await task(items[next++]!);
    }),
  );
}

const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK']).stdout.toString().trim() || 100);

/**
 * CPU time a process has used so far, user and system; with `children`, also that of the child
 * processes it has waited for (an edge's ffmpeg).
 */
export function cpuMsOf(
  pid: number,
  { children = false, thread }: { children?: boolean; thread?: number } = {},
): number {
  // utime and stime, fields 14 and 15, after the parenthesised command name; cutime and
  // cstime, 16 and 17. Of one of its threads alone with `thread`.
  const stat = thread === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${thread}/stat`;
  const fields = readFileSync(stat, 'utf8').split(') ')[1]!.split(' ');
  const used = [11, 12, ...(children ? [13, 14] : [])].map((field) => Number(fields[field]));
  return (used.reduce((sum, ticks) => sum + ticks, 0) * 1000) / CLOCK_TICKS;
}

/**
 * PostgreSQL for a server process measured for CPU or memory (embedded PGlite would weigh in
 * its figures): DATABASE_URL when set, else a throw-away local server (Debian's binaries).
 */
export async function startPostgres(): Promise<{ url: string; process: ChildProcess | null }> {
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
  const port = portBase();
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
  stopPostgres(child);
  throw new Error('postgres did not start');
}

/** Stops a server from startPostgres: the whole group, postgres itself and not just runuser. */
export function stopPostgres(child: ChildProcess | null): void {
  if (child?.pid) process.kill(-child.pid, 'SIGINT');
}

export const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;

/**
 * The value `share` of the way up `values` sorted (0.5: the median, 0.99: p99); NaN for none,
 * which a report shows as what it is rather than as a figure.
 */
export const quantile = (values: number[], share: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * share))] ?? NaN;
};
export const median = (values: number[]) => quantile(values, 0.5);

/** Figures are reported to two decimals: finer is below the noise of any run. */
export const round2 = (value: number) => Math.round(value * 100) / 100;

/**
 * Loads one URL at concurrency 16: a 3 s warm-up (JIT and caches), then BENCH_DURATION seconds
 * (15 by default). Any non-2xx answer or error fails the run; the rate and the p50 and p99
 * latencies are reported under `name`.
 */
export async function measureRequests(
  name: string,
  request: Omit<autocannon.Options, 'connections' | 'duration'>,
  targets: Record<string, string>,
): Promise<void> {
  const run = (duration: number) => autocannon({ ...request, connections: 16, duration });
  await run(3);
  const result = await run(Number(process.env.BENCH_DURATION ?? 15));
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`${result.non2xx} non-2xx, ${result.errors} errors`);
  report(
    name,
    {
      requestsPerSecond: Math.round(result.requests.average),
      latencyP50Ms: result.latency.p50,
      latencyP99Ms: result.latency.p99,
    },
    targets,
  );
}

/** Prints figures beside the committed baseline and stores this run under bench/results. */
export function report(name: string, figures: Record<string, number>, targets: Record<string, string>): void {
  const baselinePath = join(ROOT, 'bench/baselines', `${name}.json`);
  const baseline: Record<string, number> = existsSync(baselinePath)
    ? JSON.parse(readFileSync(baselinePath, 'utf8'))
    : {};
  console.log(`\n${name}`);
  for (const [key, value] of Object.entries(figures)) {
    const base = baseline[key];
    const ratio = base ? ` (baseline ${base}, x${(value / base).toFixed(2)})` : '';
    console.log(`  ${key}: ${value}${ratio}${targets[key] ? `  target ${targets[key]}` : ''}`);
  }
  mkdirSync(join(ROOT, 'bench/results'), { recursive: true });
  writeFileSync(join(ROOT, 'bench/results', `${name}.json`), `${JSON.stringify(figures, null, 2)}\n`);
}

/** One ui-api call with a session cookie; a refusal throws. Returns the answer and the cookie. */
export async function call(url: string, cookie: string, operation: string, body: unknown) {
  const response = await fetch(`${url}/.ui-api/${operation}?api-version=2.29`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Requested-With': 'XMLHttpRequest', Cookie: cookie },
    body: JSON.stringify(body),
  });
  const setCookie = response.headers.getSetCookie().at(-1)?.split(';')[0];
  const json = (await response.json()) as Record<string, unknown>;
  if (!response.ok) throw new Error(`${operation}: ${JSON.stringify(json)}`);
  return { json, cookie: setCookie ?? cookie };
}

/** A custom domain of the origin's, with the certificate the edge's TLS port serves it by. */
export interface BenchDomain {
  name: string;
  certificate: string;
  privateKey: string;
}

/**
 * An HTTP origin made through the ui-api as the bootstrap administrator (in the first
 * organization), with `domain` as its custom domain and certificate when given, once
 * `isServed(host)` says the edge serves it. Returns its host name.
 */
export async function createOrigin(
  serverUrl: string,
  admin: { email: string; password: string },
  config: { host: string; pathPrefix: string },
  isServed: (host: string) => Promise<boolean>,
  domain?: BenchDomain,
): Promise<string> {
  let { cookie } = await call(serverUrl, '', 'auth.login', {
    emailAddress: admin.email,
    password: admin.password,
  });
  const { organizations } = (await call(serverUrl, cookie, 'admin.list_organizations', {})).json as {
    organizations: Array<{ organizationID: number }>;
  };
  ({ cookie } = await call(serverUrl, cookie, 'auth.change_organization', {
    organizationID: organizations[0]!.organizationID,
  }));
  const added = await call(serverUrl, cookie, 'origin.add', {
    origin: {
      kind: 0,
      defaultCache: 86400,
      originName: domain?.name ?? '',
      config: { scheme: 'http', rewriteHost: '', ...config },
    },
  });
  const { name: host, originID } = added.json.origin as { name: string; originID: number };
  if (domain) {
    const { certificate, privateKey } = domain;
    await call(serverUrl, cookie, 'origin.upload_tls_certificate', { originID, certificate, privateKey });
  }
  for (let attempt = 0; !(await isServed(host)); attempt++) {
    if (attempt > 100) throw new Error('the edge did not load the origin');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return host;
}

/** A GET to a server on loopback with a chosen Host header (fetch() will not send one); the body whole. */
export function getWithHost(
  port: number,
  host: string,
  path: string,
  agent?: Agent,
): Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent, headers: { host } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

/** A GET over HTTPS to a server on loopback by the name `servername` (SNI and Host), unverified. */
function getOverTls(port: number, servername: string, path: string): Promise<{ status: number }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      { host: '127.0.0.1', port, path, servername, headers: { host: servername }, rejectUnauthorized: false },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0 }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/**
 * A photograph-like picture, unencoded: noise softened by a blur, closer to a photograph's
 * detail (and to what it costs to encode) than a flat colour.
 */
export function photoLike(width: number, height: number, { sigma = 60, blur = 2 } = {}): Sharp {
  const noise = { type: 'gaussian' as const, mean: 128, sigma };
  return sharp({ create: { width, height, channels: 3, background: '#808080', noise } }).blur(blur);
}

/** An HTTP origin on loopback serving `files` (by path), 404 for any other path. */
export async function serveFiles(
  files: Record<string, { contentType: string; body: Buffer }>,
): Promise<{ port: number; close(): void }> {
  const origin = createServer((req, res) => {
    const file = files[req.url ?? ''];
    if (!file) return res.writeHead(404).end();
    res.writeHead(200, { 'content-type': file.contentType }).end(file.body);
  });
  // The edge keeps its connections to origins open; closed here after Node's default 5 s idle,
  // one could close just as the edge reuses it, failing that request (502).
  origin.keepAliveTimeout = 120_000;
  await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
  return { port: (origin.address() as AddressInfo).port, close: () => origin.close() };
}

/** The image edge in its own process, serving one origin, as startEdge leaves it. */
export interface BenchEdge {
  port: number;
  /** The origin's host name on the edge. */
  host: string;
  /** The edge's HTTPS port (EDGE_TLS_PORT), serving the origin's custom domain when it has one. */
  tlsPort: number;
  /** The edge process (with workers, their primary): the one to measure, with processTree. */
  pid: number;
  /** A GET through the edge for the origin. */
  get(path: string): Promise<{ status: number; body: Buffer }>;
  /** Stops the edge and the console server, then the PostgreSQL started for them. */
  stop(): Promise<void>;
}

/**
 * The image edge as production runs it: its own process (`npm run start:edge`: compiled, access
 * log on, written to a file) on PostgreSQL (startPostgres), beside a console server on the same
 * database through which the bootstrap administrator adds one HTTP origin over `origin`;
 * returned once the edge serves `probePath` from it. A failure on the way stops what was
 * started: no PostgreSQL outlives a server that did not start.
 */
export async function startEdge(options: {
  origin: { host: string; pathPrefix: string };
  probePath: string;
  agent?: Agent;
  /** The edge process's environment, over start:edge's. */
  env?: Record<string, string>;
  /** The origin's custom domain: returned once the edge also serves `probePath` over HTTPS by it. */
  domain?: BenchDomain;
}): Promise<BenchEdge> {
  const admin = { email: 'bench@example.com', password: 'bench-password-123' };
  const port = portBase();
  const database = await startPostgres();
  const shared = {
    DATABASE_URL: database.url,
    DATA_DIR: mkdtempSync(join(tmpdir(), 'ukiyo-bench-')),
    SECRET_KEY: randomBytes(32).toString('base64'),
    ALLOW_PRIVATE_ORIGINS: '1',
  };
  let server: Awaited<ReturnType<typeof startServer>> | undefined;
  let edge: ChildProcess | undefined;
  const stop = async () => {
    // The edge first: it flushes its counters to the database on the way out.
    if (edge) await stopProcess(edge);
    if (server) await stopProcess(server.process);
    stopPostgres(database.process);
  };
  try {
    server = await startServer(
      { ...shared, BOOTSTRAP_ADMIN_EMAIL: admin.email, BOOTSTRAP_ADMIN_PASSWORD: admin.password },
      'apps/server/src/main-server.ts',
    );
    const log = openSync(join(shared.DATA_DIR, 'edge.log'), 'a');
    // Compiled, as start:edge runs it (no TypeScript loader in the process measured).
    const built = spawnSync(process.execPath, ['scripts/build.mjs', 'edge'], { cwd: ROOT, encoding: 'utf8' });
    if (built.status !== 0) throw new Error(`edge build failed: ${built.stderr}`);
    // BENCH_EDGE_NODE_ARGS: flags for the edge's node, e.g. `--cpu-prof --cpu-prof-dir=/tmp/p`.
    const nodeArgs = process.env.BENCH_EDGE_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
    edge = spawn(process.execPath, [...nodeArgs, '--enable-source-maps', 'dist/edge.js'], {
      cwd: ROOT,
      env: {
        ...process.env,
        ...shared,
        HOST: '127.0.0.1',
        EDGE_PORT: String(port),
        EDGE_TLS_PORT: String(port + 1),
        METRICS_PORT: String(port + 2),
        LOG_LEVEL: 'info',
        // As start:edge sets them.
        MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? '2',
        UV_THREADPOOL_SIZE: process.env.UV_THREADPOOL_SIZE ?? '8',
        ...options.env,
      },
      stdio: ['ignore', log, 'inherit'],
    });
    const get = (host: string, path: string) => getWithHost(port, host, path, options.agent);
    const served = async (answer: Promise<{ status: number }>) => {
      if (edge!.exitCode !== null) throw new Error('the edge process exited');
      return (await answer.catch(() => ({ status: 0 }))).status === 200;
    };
    const { domain } = options;
    const host = await createOrigin(
      server.url,
      admin,
      options.origin,
      async (candidate) =>
        (await served(get(candidate, options.probePath))) &&
        (!domain || served(getOverTls(port + 1, domain.name, options.probePath))),
      domain,
    );
    return { port, host, tlsPort: port + 1, pid: edge.pid!, get: (path) => get(host, path), stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Resident memory of a process and its descendants now, in MB. */
export function rssMb(pid: number): number {
  const pages = processTree(pid).map((each) =>
    Number(readFileSync(`/proc/${each}/statm`, 'utf8').split(' ')[1]),
  );
  return Math.round((pages.reduce((a, b) => a + b, 0) * 4096) / 1024 ** 2);
}

/** A process's command line (its arguments joined by NULs), or '' when it has ended. */
export function commandLineOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return '';
  }
}

/** A process and its descendants (cluster workers, nginx's worker), for their CPU and memory. */
export function processTree(pid: number): number[] {
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
  return [pid, ...(children ? children.split(' ').flatMap((child) => processTree(Number(child))) : [])];
}

async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  await exited;
}
