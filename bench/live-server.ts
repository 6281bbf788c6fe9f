import { execFile, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import { CHROMIUM_PATH } from '../e2e/support/chromium.ts';
import { Permission } from '@ukiyo/contract';
import { createLive, type Live } from '../apps/live/src/index.ts';
import { AppProcess, freePort, freeUdpPort, processEnv } from '../apps/server/test/processes.ts';
import { encodeToken } from '../apps/server/src/auth/api-tokens.ts';
import { randomToken, tokenDigest } from '../apps/server/src/crypto/tokens.ts';
import { createOrganization, createSakuraAccount } from '../apps/server/src/db/repositories/organizations.ts';
import { createServerDeps, loadConfig } from '../apps/server/src/index.ts';
import { commandLineOf, cpuMsOf, processTree } from './lib.ts';

/** Bits of the frame-time strip the live benchmarks' publishers burn into their pictures (ms). */
export const BITS = 20;

/** The frame time (ms) burned into the first frame of a media file (a segment, init + part...). */
export async function frameTime(file: string): Promise<number> {
  const stdout = await new Promise<Buffer>((resolve, reject) =>
    execFile(
      'ffmpeg',
      [
        ...['-v', 'error', '-i', file, '-frames:v', '1'],
        ...[
          '-vf',
          `crop=${BITS * 32}:32:0:0,scale=${BITS}:1:flags=area`,
          '-f',
          'rawvideo',
          '-pix_fmt',
          'gray',
          '-',
        ],
      ],
      { encoding: 'buffer' },
      (error, out) => (error ? reject(error) : resolve(out)),
    ),
  );
  let value = 0;
  for (let bit = 0; bit < BITS; bit++) if (stdout[bit]! > 128) value += 2 ** bit;
  return value;
}

/** The environment's values of `names`, those it sets. */
const pick = (from: NodeJS.ProcessEnv, names: string[]) =>
  Object.fromEntries(names.flatMap((name) => (from[name] === undefined ? [] : [[name, from[name]]])));

/**
 * BENCH_SERVER_CPUS (a taskset list: `0`, `0-1`, `0,2`): the CPUs of the live server (the bench
 * process, and what it starts: viewer processes, ffmpeg, a live peer, the native floor); the
 * clients (publisher, viewers, Chromium) get the others. So a server is measured on cores of
 * its own, as a host serving viewers on other machines is, rather than sharing them with its
 * clients. Unset: every process shares every core.
 */
const SERVER_CPUS = process.env.BENCH_SERVER_CPUS;

/** The CPUs not in SERVER_CPUS, as a taskset list; undefined when the CPUs are not split. */
function clientCpus(): string | undefined {
  if (SERVER_CPUS === undefined) return undefined;
  const server = new Set(
    SERVER_CPUS.split(',').flatMap((part) => {
      const [first, last = first] = part.split('-').map(Number);
      return Array.from({ length: last! - first! + 1 }, (_, offset) => first! + offset);
    }),
  );
  const others = cpus()
    .map((_, cpu) => cpu)
    .filter((cpu) => !server.has(cpu));
  if (others.length === 0) throw new Error(`BENCH_SERVER_CPUS=${SERVER_CPUS} leaves no CPU to the clients`);
  return others.join(',');
}

/**
 * The CPU (ms) the live server has used so far: this process (ingest, LL-HLS mirrored, the packets
 * passed on, what its own thread answers) and its viewer processes (WebRTC viewers, LL-HLS
 * connections), the children of this process that run its viewer entry.
 */
export function liveServerCpuMs(): number {
  const { user, system } = process.cpuUsage();
  const viewerProcesses = processTree(process.pid)
    .slice(1)
    .filter((pid) => commandLineOf(pid).includes('viewer-process'));
  return (user + system) / 1e3 + viewerProcesses.reduce((sum, pid) => sum + cpuMsOf(pid), 0);
}

/** Moves every thread of process `pid` to `cpuList`; its children to come inherit it. */
function pin(pid: number, cpuList: string) {
  execFileSync('taskset', ['--all-tasks', '--cpu-list', '--pid', cpuList, String(pid)], { stdio: 'ignore' });
}

/**
 * Puts the Chromium this process launched on the clients' CPUs, when split: its zygote among
 * them, so the renderers it forks later inherit them.
 */
export function pinChromium() {
  const cpuList = clientCpus();
  if (cpuList === undefined) return;
  for (const pid of processTree(process.pid).slice(1))
    if (commandLineOf(pid).startsWith(CHROMIUM_PATH)) pin(pid, cpuList);
}

/** A client's command line: `command` with `args`, on the clients' CPUs when split. */
function clientCommand(command: string, args: string[]): [string, string[]] {
  const cpuList = clientCpus();
  return cpuList === undefined ? [command, args] : ['taskset', ['--cpu-list', cpuList, command, ...args]];
}

/**
 * The live benchmarks' server: a live process (HTTP, RTMP and SRT listening on loopback) over
 * a fresh database (PGlite, or DATABASE_URL), a live organization and its API token, and a
 * caller of the live API that throws on refusals. `log` replaces the deps' logger; with
 * `fleet`, it runs on that PostgreSQL with that SECRET_KEY and its address for peers.
 */
export async function startLiveBench(log?: Logger, fleet?: { databaseUrl: string; secretKey: string }) {
  // Before the server starts: its viewer processes, one per core it may use, inherit this.
  if (SERVER_CPUS !== undefined) pin(process.pid, SERVER_CPUS);
  const dataDir = mkdtempSync(join(tmpdir(), 'ukiyo-bench-live-'));
  // Ports known before the live server exists: the ingest URLs its API answers name them.
  const ports = { live: await freePort(), rtmp: await freePort(), srt: await freeUdpPort() };
  const config = loadConfig({
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    LIVE_PORT: String(ports.live),
    LIVE_RTMP_PORT: String(ports.rtmp),
    LIVE_SRT_PORT: String(ports.srt),
    PUBLIC_API_RATE_PER_MINUTE: '1000000',
    // ListPlaylistURLs is polled every 50 ms: far beyond a customer's live API budget.
    LIVE_API_RATE_PER_MINUTE: '1000000',
    ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}),
    ...(fleet
      ? {
          DATABASE_URL: fleet.databaseUrl,
          SECRET_KEY: fleet.secretKey,
          LIVE_INTERNAL_URL: `http://127.0.0.1:${ports.live}`,
        }
      : {}),
    // The viewer processes and their limit as the environment sets them (processes against none).
    ...pick(process.env, ['LIVE_VIEWER_PROCESSES', 'LIVE_MAX_EVENT_LOOP_UTILIZATION']),
  });
  const { deps, database } = await createServerDeps(config);
  const live: Live = await createLive({ ...deps, ...(log ? { log } : {}) }, { dir: join(dataDir, 'live') });
  await new Promise<void>((resolve) => live.server.listen(ports.live, '127.0.0.1', resolve));
  await new Promise<void>((resolve) => live.rtmp.listen(ports.rtmp, '127.0.0.1', resolve));
  await live.srt.listen(ports.srt, '127.0.0.1');
  const base = `http://127.0.0.1:${ports.live}`;
  const accountId = await createSakuraAccount(deps.db, { memberCode: `BENCH${Date.now()}`, name: 'bench' });
  const organizationId = await createOrganization(deps.db, {
    accountId,
    name: 'live bench',
    serviceCode: `bench-${Date.now()}`,
    isLive: true,
  });
  const secret = randomToken();
  await deps.db
    .insertInto('auth_tokens')
    .values({
      organization_id: organizationId,
      token_hash: tokenDigest(secret),
      token_last4: secret.slice(-4),
      permission: Permission.channel,
    })
    .execute();
  const token = encodeToken(secret);
  const call = async (target: string, body: unknown) => {
    const response = await fetch(`${base}/`, {
      method: 'POST',
      headers: { 'X-Sora-Target': target, Authorization: `Bearer ${token}` },
      body: JSON.stringify(body),
    });
    const answer = (await response.json()) as Record<string, unknown>;
    if (!response.ok) throw new Error(`${target}: ${response.status} ${JSON.stringify(answer)}`);
    return answer;
  };
  /** Stops as the live process's own shutdown does: the server, the job queue, the database. */
  const close = async () => {
    await live.close();
    await deps.jobs.stop();
    await database.close();
  };
  return { live, base, token, call, close };
}

/**
 * A second live process of startLiveBench's fleet (`apps/live/src/main.ts`, as `npm run
 * start:live` runs it), once ready: the limit of its thread as the environment sets it.
 */
export async function startLivePeer(fleet: { databaseUrl: string; secretKey: string }) {
  const port = await freePort();
  const peer = new AppProcess(
    'live-peer',
    'apps/live/src/main.ts',
    await processEnv({
      DATABASE_URL: fleet.databaseUrl,
      SECRET_KEY: fleet.secretKey,
      LIVE_PORT: String(port),
      LIVE_INTERNAL_URL: `http://127.0.0.1:${port}`,
      ...pick(process.env, ['LIVE_MAX_EVENT_LOOP_UTILIZATION']),
    }),
  ).start();
  await peer.ready();
  return { peer, base: `http://127.0.0.1:${port}` };
}

/** The werift publisher of bench/live.ts in a child process; resolves frame time 0's wall clock. */
export function startTimedPublisher(whipUrl: string, token: string) {
  const child = spawn(
    ...clientCommand(process.execPath, [
      '--import',
      'tsx',
      fileURLToPath(new URL('./live.ts', import.meta.url)),
      '--publish',
      JSON.stringify({ whipUrl, token }),
    ]),
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const zero = new Promise<number>((resolve, reject) => {
    child.stdout.setEncoding('utf8');
    child.stdout.once('data', (line: string) =>
      resolve((JSON.parse(line) as { firstPacketAt: number }).firstPacketAt),
    );
    child.once('exit', (code) => reject(new Error(`publisher exited ${code}`)));
  });
  const stop = () =>
    new Promise<void>((resolve) => {
      // A publisher that failed has exited already.
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  return { zero, stop };
}

/**
 * A bench's client entry `script` (a file URL) in a child process, on the clients' CPUs, with
 * a JSON argument; `next` resolves its next line of stdout (its reports), stdin is the parent's.
 */
export function childMode(script: URL, argument: unknown) {
  // BENCH_CHILD_NODE_ARGS: flags for the children's node, e.g. `--cpu-prof --cpu-prof-dir=/tmp/p`.
  const nodeArgs = process.env.BENCH_CHILD_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  const child = spawn(
    ...clientCommand(process.execPath, [
      ...nodeArgs,
      '--import',
      'tsx',
      fileURLToPath(script),
      JSON.stringify(argument),
    ]),
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const lines = createInterface({ input: child.stdout });
  // Its stdout's end, not its exit: a child that prints its report and exits may be seen
  // exiting before the report's line is read.
  const next = () =>
    new Promise<string>((resolve, reject) => {
      lines.once('line', resolve);
      lines.once('close', () => reject(new Error(`${script.pathname} ended (exit code ${child.exitCode})`)));
    });
  return { process: child, next };
}
