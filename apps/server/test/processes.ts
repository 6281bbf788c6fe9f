import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { mkdtempSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// Helpers for tests that run the apps as separate processes, as a fleet does.

export const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/**
 * Ports handed to child processes come from below the kernel's ephemeral range: a port the
 * kernel picked for us (listen on 0) may be given next to any outgoing connection (to
 * PostgreSQL, Redis, another test's server) before the child binds it.
 */
const EPHEMERAL_LOW = Number(
  readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0] ?? 32768,
);
const PORTS_FROM = 20_000;
/**
 * The next port to try, in turn through the range from a random start: no port is handed out
 * twice by one test process (until the range wraps). Picked at random, two processes started
 * together (compiled.int.test.ts's all-in-one and edge) could each be handed the same port that
 * was free for both, and the later to listen failed (EADDRINUSE).
 */
let nextPort = Math.floor(Math.random() * (EPHEMERAL_LOW - PORTS_FROM));

/** A port below the ephemeral range that `bind` finds free now, never one handed out before. */
async function unusedPort(bind: (port: number) => Promise<void>): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    const port = PORTS_FROM + (nextPort++ % (EPHEMERAL_LOW - PORTS_FROM));
    try {
      await bind(port);
      return port;
    } catch (error) {
      if (attempt >= 50) throw error;
    }
  }
}

/** A free loopback TCP port for a child process. */
export function freePort(): Promise<number> {
  return unusedPort(
    (port) =>
      new Promise<void>((resolve, reject) => {
        const server = createServer();
        server.once('error', reject);
        server.listen(port, '127.0.0.1', () => server.close(() => resolve()));
      }),
  );
}

/** A free loopback UDP port (the SRT ingest's), as freePort is for TCP. */
export function freeUdpPort(): Promise<number> {
  return unusedPort(
    (port) =>
      new Promise<void>((resolve, reject) => {
        const socket = createSocket('udp4');
        socket.once('error', reject);
        socket.bind(port, '127.0.0.1', () => socket.close(() => resolve()));
      }),
  );
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls until `check` returns a value (not undefined) or the time is up. */
export async function until<T>(
  what: string,
  check: () => Promise<T | undefined>,
  timeoutMs = 15_000,
  everyMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline)
      throw new Error(`${what}: not within ${timeoutMs} ms (${String(lastError ?? '')})`);
    await sleep(everyMs);
  }
}

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** A plain GET with a chosen Host header and no connection reuse. */
export function get(port: number, host: string, path: string, timeoutMs = 15_000): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, headers: { host, connection: 'close' }, timeout: timeoutMs },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

/**
 * One app process with its output kept for failure messages: `node --import tsx {entry}` for a
 * TypeScript source, plain `node {entry}` for a compiled one (dist/*.js, as production runs it).
 */
export class AppProcess {
  readonly output: string[] = [];
  child!: ChildProcess;
  exited: Promise<number | null> = Promise.resolve(null);

  constructor(
    readonly name: string,
    readonly entry: string,
    readonly env: Record<string, string>,
    /**
     * The process leads a process group of its own, so that a test can signal it with its
     * children (stopGroup), as Ctrl-C or systemd does; a test run ended by force leaves it.
     */
    private readonly ownGroup = false,
  ) {}

  start(): this {
    const loader = this.entry.endsWith('.ts') ? ['--import', 'tsx'] : [];
    this.child = spawn(process.execPath, [...loader, this.entry], {
      cwd: ROOT,
      env: { ...process.env, ...this.env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: this.ownGroup,
    });
    for (const stream of [this.child.stdout!, this.child.stderr!]) {
      stream.on('data', (chunk: Buffer) => {
        this.output.push(chunk.toString());
        if (this.output.length > 400) this.output.splice(0, 100);
      });
    }
    this.exited = new Promise((resolve) => this.child.once('exit', (code) => resolve(code)));
    return this;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Waits until the process's readiness probe (METRICS_PORT) answers 200. */
  async ready(timeoutMs = 60_000): Promise<void> {
    const port = Number(this.env.METRICS_PORT);
    await until(
      `${this.name} ready`,
      async () => {
        if (!this.running) throw new Error(`${this.name} exited:\n${this.output.join('')}`);
        const answer = await get(port, 'localhost', '/readyz', 2_000);
        return answer.status === 200 ? true : undefined;
      },
      timeoutMs,
      200,
    ).catch((error: unknown) => {
      throw new Error(`${String(error)}\n--- ${this.name} output ---\n${this.output.join('')}`);
    });
  }

  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
    if (this.running) this.child.kill(signal);
    return this.exited;
  }

  /** As stop, the signal sent to the process's whole group (started with `ownGroup`). */
  async stopGroup(signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
    if (!this.ownGroup) throw new Error(`${this.name} has no process group of its own`);
    if (this.running) process.kill(-this.child.pid!, signal);
    return this.exited;
  }
}

/** Ports and directories of one app process on loopback. */
export async function processEnv(extra: Record<string, string>): Promise<Record<string, string>> {
  return {
    HOST: '127.0.0.1',
    PORT: String(await freePort()),
    EDGE_PORT: String(await freePort()),
    EDGE_TLS_PORT: String(await freePort()),
    METRICS_PORT: String(await freePort()),
    LIVE_RTMP_PORT: String(await freePort()),
    LIVE_SRT_PORT: String(await freeUdpPort()),
    DATA_DIR: mkdtempSync(join(tmpdir(), 'ukiyo-proc-')),
    LOG_LEVEL: 'warn',
    MALLOC_ARENA_MAX: '2',
    UV_THREADPOOL_SIZE: '8',
    ...extra,
  };
}

/**
 * Two console server processes (`npm run start:server`) on one PostgreSQL and one Redis with one
 * SECRET_KEY, as a fleet runs them, once both are ready. They allow origins on loopback, where
 * the tests' own listen.
 */
export async function startConsoleServers(shared: {
  databaseUrl: string;
  redisUrl: string;
  secretKey: string;
}): Promise<AppProcess[]> {
  const servers = await Promise.all(
    ['server-1', 'server-2'].map(
      async (name) =>
        new AppProcess(
          name,
          'apps/server/src/main-server.ts',
          await processEnv({
            DATABASE_URL: shared.databaseUrl,
            REDIS_URL: shared.redisUrl,
            SECRET_KEY: shared.secretKey,
            CACHE_CALL_TIMEOUT_MS: '2000',
            SHUTDOWN_GRACE_SECONDS: '5',
            ALLOW_PRIVATE_ORIGINS: '1',
          }),
        ),
    ),
  );
  for (const server of servers) server.start();
  await Promise.all(servers.map((server) => server.ready()));
  return servers;
}

/**
 * Why a test of separate processes on one PostgreSQL (`databaseUrl`, the run's: PGlite is
 * single-process) and a private Redis cannot run here, or '' when it can.
 */
export function fleetSkipReason(databaseUrl: string | undefined): string {
  if (!databaseUrl)
    return 'needs DATABASE_URL (a PostgreSQL server shared by several processes; PGlite is single-process)';
  return PrivateRedis.available()
    ? ''
    : 'needs redis-server on PATH (the test runs a private Redis it can stop)';
}

/** A private redis-server on a free port (never the machine's own), stoppable mid-test. */
export class PrivateRedis {
  port = 0;
  private child: ChildProcess | undefined;

  static available(): boolean {
    return spawnSync('redis-server', ['--version']).status === 0;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    if (!this.port) this.port = await freePort();
    this.child = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    await until('redis up', async () => {
      const pong = spawnSync('redis-cli', ['-p', String(this.port), 'ping'])
        .stdout?.toString()
        .trim();
      return pong === 'PONG' ? true : undefined;
    });
  }

  async stop(): Promise<void> {
    const child = this.child;
    // Killed by a signal, a child keeps a null exitCode: only its signalCode says it is gone.
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }
}
