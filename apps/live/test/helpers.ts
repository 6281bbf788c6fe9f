import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Permission } from '@ukiyo/contract';
import { encodeToken } from '../../server/src/auth/api-tokens.ts';
import { randomToken, tokenDigest } from '../../server/src/crypto/tokens.ts';
import type { Config } from '../../server/src/config.ts';
import type { TestServer } from '../../server/test/harness.ts';
import { createLive, type Live, type LiveOptions } from '../src/index.ts';

export const run = promisify(execFile);

/** An encoded API token of the organization, as the console's token screen issues them. */
export async function apiToken(
  server: TestServer,
  organizationId: number,
  permission: number | null = Permission.channel,
): Promise<string> {
  const secret = randomToken();
  await server.deps.db
    .insertInto('auth_tokens')
    .values({
      organization_id: organizationId,
      token_hash: tokenDigest(secret),
      token_last4: secret.slice(-4),
      permission,
    })
    .execute();
  return encodeToken(secret);
}

export interface LiveUnderTest {
  live: Live;
  baseUrl: string;
  dir: string;
  /** Calls the live API: `X-Sora-Target` and a JSON body. */
  call(
    target: string,
    body: unknown,
    token: string,
  ): Promise<{ status: number; body: Record<string, unknown> & { error?: string } }>;
}

/** A free loopback port, known before a server is created (its internal URL names it). */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/**
 * A live server over the test database, listening on a loopback port that is also its internal
 * URL (so several act as a fleet), its files in a temp dir.
 */
export async function startLive(
  server: TestServer,
  overrides: Partial<LiveOptions> = {},
  environment: Partial<Config> = {},
): Promise<LiveUnderTest> {
  const dir = mkdtempSync(join(tmpdir(), 'ukiyo-live-'));
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const { db, secrets, log, limits } = server.deps;
  // The tests poll ListPlaylistURLs far faster than customers are allowed to.
  const config = {
    ...server.deps.config,
    ALLOW_PRIVATE_ORIGINS: true,
    LIVE_API_RATE_PER_MINUTE: 1_000_000,
    ...environment,
  };
  const live = await createLive(
    { db, secrets, log, config, limits },
    { dir, usageFlushMs: 60_000, tickMs: 60_000, internalUrl: baseUrl, ...overrides },
  );
  await new Promise<void>((resolve) => live.server.listen(port, '127.0.0.1', resolve));
  return {
    live,
    baseUrl,
    dir,
    async call(target, body, token) {
      const response = await fetch(`${baseUrl}/`, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          'X-Sora-Target': target,
          Authorization: `Bearer ${token}`,
        },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    },
  };
}

export interface ProbedStream {
  codec_name: string;
  codec_type: string;
  profile?: string;
  width?: number;
  height?: number;
  bit_rate?: string;
  sample_rate?: string;
}

export async function probe(
  file: string,
): Promise<{ streams: ProbedStream[]; format: { duration: string } }> {
  const { stdout } = await run('ffprobe', [
    '-v',
    'error',
    '-show_streams',
    '-show_format',
    '-of',
    'json',
    file,
  ]);
  return JSON.parse(stdout) as { streams: ProbedStream[]; format: { duration: string } };
}

/** Polls until `check` returns a value (not undefined), or fails after `timeoutMs`. */
export async function waitFor<T>(
  check: () => Promise<T | undefined>,
  timeoutMs: number,
  what: string,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** ffmpeg processes whose parent is this process (the live server's and the publishers'). */
export async function childFfmpegCount(): Promise<number> {
  const { stdout } = await run('ps', ['-o', 'comm=', '--ppid', String(process.pid)]).catch(() => ({
    stdout: '',
  }));
  return stdout.split('\n').filter((name) => name.trim() === 'ffmpeg').length;
}
