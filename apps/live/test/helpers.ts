import { execFile } from 'node:child_process';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import { Webhook } from 'standardwebhooks';
import { mkdtempSync } from 'node:fs';
import type { AddressInfo, Server as NetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Permission } from '@ukiyo/contract';
import type { Config } from '@ukiyo/server';
import { encodeToken, freePort, randomToken, type TestServer, tokenDigest } from '@ukiyo/server/testing';
import { createLive, type Live, type LiveOptions } from '../src/index.ts';

export const run = promisify(execFile);

/** An encoded API token of the organization, as the console's token screen issues them. */
export async function apiToken(
  server: Pick<TestServer, 'deps'>,
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
  /** `rtmp://127.0.0.1:{port}/live`, the port the RTMP server listens on (LIVE_RTMP_PORT). */
  rtmpUrl: string;
  /** The same for RTMPS, when the environment gives its certificate and key files. */
  rtmpsUrl: string | undefined;
  /** The UDP port the SRT front is bound to (a free one, not LIVE_SRT_PORT). */
  srtPort: number;
  dir: string;
  /** Calls the live API: `X-Sora-Target` and a JSON body. */
  call(
    target: string,
    body: unknown,
    token: string,
  ): Promise<{ status: number; body: Record<string, unknown> & { error?: string } }>;
}

/**
 * startLive's environment for a live server whose viewers (WebRTC, and LL-HLS connections handed
 * over) are served as in production: by a viewer process (one, as the suite runs many servers).
 */
export const VIEWER_PROCESS: Partial<Config> = { LIVE_VIEWER_PROCESSES: 1 };

/**
 * A live server over the test database, listening on a loopback port that is also its internal
 * URL (so several act as a fleet), its files in a temp dir. Its RTMP server (and RTMPS server,
 * with LIVE_RTMPS_CERT_FILE and LIVE_RTMPS_KEY_FILE) listens on free ports set as LIVE_RTMP_PORT
 * and LIVE_RTMPS_PORT, so the ingest endpoints it reports name them.
 */
export async function startLive(
  server: TestServer,
  overrides: Partial<LiveOptions> = {},
  environment: Partial<Config> = {},
): Promise<LiveUnderTest> {
  const dir = mkdtempSync(join(tmpdir(), 'ukiyo-live-'));
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const { db, secrets, log, limits, jobs } = server.deps;
  // The tests poll ListPlaylistURLs far faster than customers are allowed to.
  const rtmps = Boolean(environment.LIVE_RTMPS_CERT_FILE);
  const config = {
    ...server.deps.config,
    ALLOW_PRIVATE_ORIGINS: true,
    LIVE_API_RATE_PER_MINUTE: 1_000_000,
    // The test process runs the server, the edge and the clients on one thread: busy, but not
    // with viewers to turn away (live-whep's capacity test sets its own).
    LIVE_MAX_EVENT_LOOP_UTILIZATION: 1,
    // Viewers served on the live process's own thread: a viewer process starts on about 0.8 s of
    // CPU from source, and mirrors every rendition from then on, while the suite runs dozens of
    // live servers beside each other's publishers and Chromium. The files that test what viewers
    // get set 1 (VIEWER_PROCESS); the all-in-one's e2e server keeps the default, one per core.
    LIVE_VIEWER_PROCESSES: 0,
    LIVE_RTMP_PORT: await freePort(),
    LIVE_RTMPS_PORT: rtmps ? await freePort() : undefined,
    ...environment,
  };
  const live = await createLive(
    { db, secrets, log, config, limits, jobs },
    { dir, usageFlushMs: 60_000, tickMs: 60_000, internalUrl: baseUrl, ...overrides },
  );
  // As a load balancer would: publishers and viewers come once its viewer processes have started
  // (starting, they take the CPU a first publisher's ffmpeg needs).
  await waitFor(
    async () => ((await live.health.report()).body.checks.viewerProcesses?.ok ? true : undefined),
    30_000,
    'the viewer process to start',
  );
  const listening = (target: NetServer | undefined, on: number | undefined) =>
    new Promise<void>((resolve) => (target ? target.listen(on, '127.0.0.1', resolve) : resolve()));
  await Promise.all([
    listening(live.server, port),
    listening(live.rtmp, config.LIVE_RTMP_PORT),
    listening(live.rtmps, config.LIVE_RTMPS_PORT),
  ]);
  const srtPort = await live.srt.listen(0, '127.0.0.1');
  return {
    live,
    baseUrl,
    rtmpUrl: `rtmp://127.0.0.1:${config.LIVE_RTMP_PORT}/live`,
    rtmpsUrl: live.rtmps ? `rtmps://127.0.0.1:${config.LIVE_RTMPS_PORT}/live` : undefined,
    srtPort,
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

/** The frames a viewer's video file decodes to, its picture size and profile, and the decoder's complaints. */
export async function decodedVideo(file: string) {
  const { streams } = await probe(file);
  const { stdout } = await run('ffprobe', [
    ...['-v', 'error', '-count_frames', '-select_streams', 'v:0'],
    ...['-show_entries', 'stream=nb_read_frames', '-of', 'csv=p=0', file],
  ]);
  const { stderr } = await run('ffmpeg', ['-v', 'error', '-i', file, '-f', 'null', '-']);
  return {
    frames: Number(stdout.trim()),
    width: streams[0]?.width,
    height: streams[0]?.height,
    profile: streams[0]?.profile,
    errors: stderr,
  };
}

/** The URIs of a media playlist's whole segments, oldest first. */
export function segmentNames(playlist: string): string[] {
  return playlist.split('\n').filter((line) => line !== '' && !line.startsWith('#'));
}

/** The media sequence number of an LL-HLS playlist's newest whole segment (`seg{msn}.m4s`). */
export function newestSegment(playlist: string): number {
  return Number(/seg([0-9]+)\.m4s/.exec(segmentNames(playlist).at(-1)!)![1]);
}

/**
 * A media playlist's first whole segment (polled for until there is one), as a file can hold it
 * to be probed: an LL-HLS fMP4 segment after its EXT-X-MAP init segment, an MPEG-TS one alone.
 */
export async function firstSegmentOf(
  mediaUrl: string,
): Promise<{ bytes: Buffer; contentType: string | null }> {
  const playlist = await waitFor(
    async () => {
      const text = await (await fetch(mediaUrl)).text();
      return segmentNames(text).length > 0 ? text : undefined;
    },
    10_000,
    'a whole segment in the media playlist',
  );
  const get = async (name: string) => {
    const answer = await fetch(new URL(name, mediaUrl));
    return {
      bytes: Buffer.from(await answer.arrayBuffer()),
      contentType: answer.headers.get('content-type'),
    };
  };
  const segment = await get(segmentNames(playlist)[0]!);
  const map = /#EXT-X-MAP:URI="([^"]+)"/.exec(playlist)?.[1];
  if (!map) return segment;
  return { ...segment, bytes: Buffer.concat([(await get(map)).bytes, segment.bytes]) };
}

/**
 * A live server whose WebRTC viewers the test's own thread can starve (starveUntilShed): served
 * on the live process's thread, read over windows of a second (two shorter ones starved on a busy
 * machine's handshakes), with a limit of 0.9999, at which the thread starves. A thread that is
 * merely slow reads under it: on a machine whose cores another test file's Chromium and encoders
 * kept busy, this thread read 0.94 to 0.96 with nothing of its own to do, and at the 0.97 a lower
 * limit starves at, shed the viewer the test keeps.
 */
export function startStarvable(server: TestServer): Promise<LiveUnderTest> {
  return startLive(
    server,
    { loadWindowMs: 1_000 },
    { LIVE_MAX_EVENT_LOOP_UTILIZATION: 0.9999, LIVE_VIEWER_PROCESSES: 0 },
  );
}

/**
 * Keeps this thread (which runs `live` too) busy, windows in a row with a moment between them
 * for the load guard's timer (a turn of the event loop that waits for nothing, so that the thread
 * reads all but fully busy), until `live` sheds a WebRTC viewer or 10 s pass; resolves the
 * viewers shed. `live` is one of startStarvable's.
 */
export async function starveUntilShed(live: LiveUnderTest): Promise<number> {
  const shed = () => metricTotal(live, 'ukiyo_live_webrtc_viewers_shed_total');
  const deadline = Date.now() + 10_000;
  while ((await shed()) === 0 && Date.now() < deadline) {
    const until = performance.now() + 300;
    while (performance.now() < until);
    await new Promise((resolve) => setImmediate(resolve));
  }
  return shed();
}

/** A metric of `live`'s, summed over its labels. */
export async function metricTotal(live: LiveUnderTest, name: string): Promise<number> {
  const { values } = await live.live.metrics.getSingleMetric(name)!.get();
  return values.reduce((sum, { value }) => sum + value, 0);
}

/** Polls until `check` returns a value (not undefined), or fails after `timeoutMs`. */
export async function waitFor<T>(
  check: () => Promise<T | undefined>,
  timeoutMs: number,
  what: string,
  intervalMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** ffmpeg processes whose parent is this process (the live server's and the publishers'). */
export async function childFfmpegCount(): Promise<number> {
  const { stdout } = await run('ps', ['-o', 'comm=', '--ppid', String(process.pid)]).catch(() => ({
    stdout: '',
  }));
  return stdout.split('\n').filter((name) => name.trim() === 'ffmpeg').length;
}

/** s3rver on a loopback port with an `archive` bucket: the archive's S3 in the tests. */
export async function startS3(): Promise<{ endPoint: string; s3: S3Client; close(): Promise<void> }> {
  const s3rver = new S3rver({
    port: 0,
    address: '127.0.0.1',
    silent: true,
    directory: mkdtempSync(join(tmpdir(), 'ukiyo-s3-')),
  });
  const endPoint = `http://127.0.0.1:${((await s3rver.run()) as AddressInfo).port}`;
  const s3 = new S3Client({
    endpoint: endPoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  });
  await s3.send(new CreateBucketCommand({ Bucket: 'archive' }));
  return {
    endPoint,
    s3,
    close: async () => {
      s3.destroy();
      await s3rver.close();
    },
  };
}

/** What a receiver got: the raw body and headers, as a receiver verifies them. */
export interface Received {
  path: string;
  body: string;
  headers: IncomingHttpHeaders;
}

/** A customer's endpoint: answers each request with the next status of `statuses` (then 200). */
export async function receiver(
  statuses: number[] = [],
): Promise<{ url: string; calls: Received[]; server: Server }> {
  const calls: Received[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      calls.push({ path: req.url ?? '', body, headers: req.headers });
      res.writeHead(statuses.shift() ?? 200, { 'content-type': 'application/json' }).end('{"allowed": true}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, calls, server };
}

/** Verifies a received call with the Standard Webhooks library, as the docs tell receivers to. */
export function verified(secret: string, call: Received): Record<string, unknown> {
  return new Webhook(secret).verify(call.body, {
    'webhook-id': String(call.headers['webhook-id']),
    'webhook-timestamp': String(call.headers['webhook-timestamp']),
    'webhook-signature': String(call.headers['webhook-signature']),
  }) as Record<string, unknown>;
}
