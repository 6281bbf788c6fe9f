// Live ingest: WHIP publishers of three stacks into a two-rung ladder (720p30 2.5 Mbit/s,
// 360p30 800 kbit/s, 1 s segments): the werift test publisher (720p30 H.264 from ffmpeg), a
// real aiortc publisher (apps/live/test/aiortc-publisher.py, Debian's python3-aiortc) and
// Chromium (/usr/bin/chromium through playwright-core: a fake camera and microphone,
// RTCPeerConnection and fetch), each BENCH_RUNS times (3). Time to the first playable segment
// (ListPlaylistURLs answers the playlist URL, polled every 50 ms) is taken from the publisher's
// WHIP POST and from the first keyframe the server received (its "publisher on air" log).
// Targets (issue 15): <= 2 s after the first keyframe for every stack; glass-to-glass <= 3 s;
// CPU per stream reported. A stack that cannot run here (no aiortc, no Chromium) is skipped.
//
// Glass-to-glass without OCR: the publisher overlays its own frame time as a 20-bit binary
// strip (black/white 32 px blocks, milliseconds) on top of the picture. The viewer side polls
// the 720p media playlist like a player at the live edge; when a segment appears it is
// downloaded, its first frame decoded and the strip read back. Latency is the moment the
// frame became viewable minus the moment it was generated (the publisher's first RTP packet
// is frame time 0). The publisher runs in a child process so the CPU figure is the server's.
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { Permission } from '@ukiyo/contract';
import { createLive } from '../apps/live/src/index.ts';
import { onAirLog } from '../apps/live/test/on-air-log.ts';
import { publish } from '../apps/live/test/publisher.ts';
import { encodeToken } from '../apps/server/src/auth/api-tokens.ts';
import { randomToken, tokenDigest } from '../apps/server/src/crypto/tokens.ts';
import { createOrganization, createSakuraAccount } from '../apps/server/src/db/repositories/organizations.ts';
import { createServerDeps, loadConfig } from '../apps/server/src/index.ts';
import { report } from './lib.ts';

const run = promisify(execFile);
const BITS = 20;
const STRIP = `color=c=black:s=${BITS * 32}x32:r=30,format=gray,geq=lum='255*mod(floor(floor(T*1000+0.5)/pow(2\\,floor(X/32)))\\,2)'`;
const SOURCE = `testsrc2=size=1280x720:rate=30[bg];${STRIP}[code];[bg][code]overlay=0:0[out0]`;

interface Started {
  /** Wall clock of the WHIP POST. */
  postedAt: Promise<number>;
  stop(): Promise<void>;
}

/** The werift test publisher in a child process (so CPU figures are the server's alone). */
function startPublisher(whipUrl: string, token: string) {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', fileURLToPath(import.meta.url), '--publish', JSON.stringify({ whipUrl, token })],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const times = new Promise<{ postedAt: number; firstPacketAt: number }>((resolve, reject) => {
    child.stdout.setEncoding('utf8');
    child.stdout.once('data', (line: string) =>
      resolve(JSON.parse(line) as { postedAt: number; firstPacketAt: number }),
    );
    child.once('exit', (code) => reject(new Error(`publisher exited ${code}`)));
  });
  const stop = () =>
    new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  return { times, stop };
}

/** The frame time (ms) burned into the first frame of a segment. */
async function frameTime(segment: string): Promise<number> {
  const { stdout } = await run(
    'ffmpeg',
    [
      '-v',
      'error',
      '-i',
      segment,
      '-frames:v',
      '1',
      '-vf',
      `crop=${BITS * 32}:32:0:0,scale=${BITS}:1:flags=area`,
      '-f',
      'rawvideo',
      '-pix_fmt',
      'gray',
      '-',
    ],
    { encoding: 'buffer' },
  );
  let value = 0;
  for (let bit = 0; bit < BITS; bit++) if (stdout[bit]! > 128) value += 2 ** bit;
  return value;
}

/** CPU seconds (user + system) of a process from /proc. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

async function packagerPid(): Promise<number> {
  const { stdout } = await run('ps', ['-o', 'pid=,args=', '--ppid', String(process.pid)]);
  const line = stdout.split('\n').find((row) => row.includes('ffmpeg') && row.includes('pipe:0'));
  if (!line) throw new Error('no packaging ffmpeg');
  return Number(line.trim().split(/\s+/)[0]);
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const PYTHON = '/usr/bin/python3';
const AIORTC_PUBLISHER = fileURLToPath(new URL('../apps/live/test/aiortc-publisher.py', import.meta.url));
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** aiortc's own offer and media (320x180 at 15 fps, a sine tone), for 60 s at most. */
function startAiortc(whipUrl: string, token: string): Started {
  const child = spawn(PYTHON, [AIORTC_PUBLISHER, whipUrl, token, '60'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const postedAt = new Promise<number>((resolve, reject) => {
    let buffered = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      buffered += chunk;
      for (const line of buffered.split('\n').slice(0, -1)) {
        const event = JSON.parse(line) as { event: string; at?: number; status?: number };
        if (event.event === 'posting') resolve(Math.round(event.at!));
        if (event.event === 'answered' && event.status !== 201)
          reject(new Error(`WHIP answered ${event.status}`));
      }
      buffered = buffered.slice(buffered.lastIndexOf('\n') + 1);
    });
    void exited.then(() => reject(new Error('aiortc publisher exited')));
  });
  return {
    postedAt,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

const CHROMIUM_PAGE = `<!doctype html><meta charset="utf-8"><title>publisher</title><script>
async function publish(whipUrl, token) {
  const stream = await navigator.mediaDevices.getUserMedia({
    video: { width: 1280, height: 720, frameRate: 30 },
    audio: true,
  });
  const pc = new RTCPeerConnection();
  for (const track of stream.getTracks()) pc.addTransceiver(track, { direction: 'sendonly' });
  await pc.setLocalDescription(await pc.createOffer());
  await new Promise((resolve) => {
    if (pc.iceGatheringState === 'complete') return resolve();
    pc.addEventListener('icegatheringstatechange', () => pc.iceGatheringState === 'complete' && resolve());
    setTimeout(resolve, 2000);
  });
  const postedAt = Date.now();
  const response = await fetch(whipUrl, {
    method: 'POST',
    headers: { 'Content-Type': 'application/sdp', Authorization: 'Bearer ' + token },
    body: pc.localDescription.sdp,
  });
  const answer = await response.text();
  if (response.status !== 201) return { status: response.status, postedAt, error: answer };
  await pc.setRemoteDescription({ type: 'answer', sdp: answer });
  window.publisher = { pc, stream };
  return { status: 201, postedAt };
}
</script>`;

/**
 * Chromium as a browser publisher: Debian's build with a fake camera (its animated test
 * pattern) and microphone, flags as e2e/playwright.config.ts, the page served from 127.0.0.1
 * (a secure context, so getUserMedia works).
 */
async function chromiumStack(): Promise<
  { start(whipUrl: string, token: string): Promise<Started>; close(): Promise<void> } | undefined
> {
  if (!existsSync(CHROMIUM)) return undefined;
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-features=WebRtcHideLocalIpsWithMdns',
      '--use-fake-device-for-media-stream',
      '--use-fake-ui-for-media-stream',
    ],
  });
  const pageServer = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(CHROMIUM_PAGE);
  });
  await new Promise<void>((resolve) => pageServer.listen(0, '127.0.0.1', resolve));
  const pageUrl = `http://127.0.0.1:${(pageServer.address() as { port: number }).port}/`;
  return {
    async start(whipUrl, token) {
      const page = await browser.newPage();
      await page.goto(pageUrl);
      const answer = await page.evaluate(
        ([url, bearer]) =>
          (
            globalThis as unknown as {
              publish(u: string, t: string): Promise<{ status: number; postedAt: number; error?: string }>;
            }
          ).publish(url!, bearer!),
        [whipUrl, token],
      );
      if (answer.status !== 201) throw new Error(`WHIP answered ${answer.status}: ${answer.error}`);
      return { postedAt: Promise.resolve(answer.postedAt), stop: () => page.close() };
    },
    async close() {
      await browser.close();
      await new Promise((resolve) => pageServer.close(resolve));
    },
  };
}

const aiortcUsable = () =>
  run(PYTHON, ['-c', 'import aiortc']).then(
    () => true,
    () => false,
  );

async function main() {
  const dataDir = mkdtempSync(join(tmpdir(), 'ukiyo-bench-live-'));
  const config = loadConfig({
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    PUBLIC_API_RATE_PER_MINUTE: '1000000',
    // ListPlaylistURLs is polled every 50 ms: far beyond a customer's live API budget.
    LIVE_API_RATE_PER_MINUTE: '1000000',
    ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}),
  });
  const { deps, database } = await createServerDeps(config);
  // Each session logs "publisher on air" with its first keyframe, when its first segment is
  // listed: kept by channel; warnings and errors still reach stderr.
  const { log, firstKeyframes } = onAirLog(40);
  const live = await createLive({ ...deps, log }, { dir: join(dataDir, 'live') });
  await new Promise<void>((resolve) => live.server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(live.server.address() as { port: number }).port}`;
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
  const ladder = {
    hls: [
      {
        durationSeconds: 1,
        video: { width: 1280, height: 720, fps: 30, bps: 2_500_000 },
        audio: { bps: 128000 },
      },
      {
        durationSeconds: 1,
        video: { width: 640, height: 360, fps: 30, bps: 800_000 },
        audio: { bps: 64000 },
      },
    ],
  };

  /** Polls ListPlaylistURLs until the channel's playlist is listed; its wall clock. */
  const listed = async (channelId: string, since: number) => {
    for (;;) {
      const answer = await call('ImageFlux_20200207.ListPlaylistURLs', { channel_id: channelId });
      const master = (answer.hls as { playlist_url: string }[] | undefined)?.[0]?.playlist_url;
      if (master) return { at: Date.now(), master };
      if (Date.now() - since > 30_000) throw new Error('no playlist within 30 s');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  const runs = Number(process.env.BENCH_RUNS ?? 3);
  const loadAtStart = loadavg()[0]!;
  const figures: Record<string, number> = {};
  const targets: Record<string, string> = {};
  const chromium = await chromiumStack().catch((error: unknown) => {
    console.warn(`Chromium skipped: ${error instanceof Error ? error.message : String(error)}`);
    return undefined;
  });
  const stacks: [string, (whipUrl: string) => Promise<Started>][] = [
    [
      'werift',
      async (whipUrl) => {
        const publisher = startPublisher(whipUrl, token);
        return { postedAt: publisher.times.then((times) => times.postedAt), stop: publisher.stop };
      },
    ],
  ];
  if (await aiortcUsable()) stacks.push(['aiortc', async (whipUrl) => startAiortc(whipUrl, token)]);
  else console.warn(`aiortc skipped: ${PYTHON} cannot import aiortc`);
  if (chromium) stacks.push(['chromium', (whipUrl) => chromium.start(whipUrl, token)]);

  try {
    for (const [stack, start] of stacks) {
      const fromPost: number[] = [];
      const fromKeyframe: number[] = [];
      let failures = 0;
      for (let round = 0; round < runs; round++) {
        const channelId = (await call('ImageFlux_20200316.CreateMultistreamChannelWithHLS', ladder))
          .channel_id as string;
        const spawned = Date.now();
        const publisher = await start(`${base}/whip/${channelId}`).catch((error: unknown) => {
          console.log(`${stack} run ${round + 1}: ${error instanceof Error ? error.message : String(error)}`);
          return undefined;
        });
        if (!publisher) {
          failures++;
          await call('ImageFlux_20180501.DeleteChannel', { channel_id: channelId });
          continue;
        }
        const playable = await listed(channelId, spawned).catch((error: unknown) => {
          console.log(`${stack} run ${round + 1}: ${error instanceof Error ? error.message : String(error)}`);
          return undefined;
        });
        const postedAt = await publisher.postedAt;
        const keyframeAt = firstKeyframes.get(channelId);
        if (!playable || keyframeAt === undefined) {
          failures++;
          await publisher.stop();
          await call('ImageFlux_20180501.DeleteChannel', { channel_id: channelId });
          continue;
        }
        fromPost.push(playable.at - postedAt);
        fromKeyframe.push(playable.at - keyframeAt);
        console.log(
          `${stack} run ${round + 1}: first segment listed ${playable.at - postedAt} ms after the WHIP POST, ` +
            `${playable.at - keyframeAt} ms after the first keyframe`,
        );
        await publisher.stop();
        await call('ImageFlux_20180501.DeleteChannel', { channel_id: channelId });
      }
      // A run with no playlist within 30 s counts as 30 s (and as a failure).
      while (fromPost.length < runs) {
        fromPost.push(30_000);
        fromKeyframe.push(30_000);
      }
      figures[`${stack}FirstSegmentFromPostMs`] = median(fromPost);
      figures[`${stack}FirstSegmentFromKeyframeMs`] = median(fromKeyframe);
      if (failures > 0) figures[`${stack}Failures`] = failures;
      targets[`${stack}FirstSegmentFromKeyframeMs`] = '<= 2000';
    }

    // Glass to glass and CPU: the werift publisher (its frame time burned into the picture).
    const latencies: number[] = [];
    const channelId = (await call('ImageFlux_20200316.CreateMultistreamChannelWithHLS', ladder))
      .channel_id as string;
    const publisher = startPublisher(`${base}/whip/${channelId}`, token);
    const { master } = await listed(channelId, Date.now());
    const { firstPacketAt: zero } = await publisher.times;
    // Glass to glass over ~12 segments, polling the 720p playlist every 100 ms.
    const media = `${base}${new URL(master).pathname.replace(/master\.m3u8$/, '0/index.m3u8')}`;
    const seen = new Set<string>();
    const scratch = mkdtempSync(join(tmpdir(), 'ukiyo-bench-seg-'));
    const until = Date.now() + 12_000;
    let first = true;
    while (Date.now() < until) {
      const names = (await (await fetch(media)).text()).split('\n').filter((line) => line.endsWith('.ts'));
      for (const name of names) {
        if (seen.has(name)) continue;
        seen.add(name);
        if (first) continue; // segments already there when we started are not "new"
        const data = Buffer.from(await (await fetch(media.replace(/index\.m3u8$/, name))).arrayBuffer());
        const viewable = Date.now();
        const file = join(scratch, name);
        await writeFile(file, data);
        latencies.push(viewable - (zero + (await frameTime(file))));
      }
      first = false;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }

    // CPU of the packaging ffmpeg and of this (server) process over 20 s of steady state.
    const pid = await packagerPid();
    const ffmpegBefore = cpuSeconds(pid);
    const nodeBefore = process.cpuUsage();
    const wallBefore = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 20_000));
    const wall = (Date.now() - wallBefore) / 1000;
    const node = process.cpuUsage(nodeBefore);
    const cpuCores = (cpuSeconds(pid) - ffmpegBefore + (node.user + node.system) / 1e6) / wall;
    await publisher.stop();
    await call('ImageFlux_20180501.DeleteChannel', { channel_id: channelId });

    report(
      'live',
      {
        ...figures,
        glassToGlassMedianMs: median(latencies),
        glassToGlassMaxMs: Math.max(...latencies),
        cpuCoresPerStream: Math.round(cpuCores * 100) / 100,
        // The machine's load (1 min) when the run started and ended: these figures move with it.
        loadavg1AtStart: Math.round(loadAtStart * 100) / 100,
        loadavg1AtEnd: Math.round(loadavg()[0]! * 100) / 100,
      },
      { ...targets, glassToGlassMedianMs: '<= 3000' },
    );
  } finally {
    await chromium?.close();
    await live.close();
    await database.close();
  }
}

if (process.argv[2] === '--publish') {
  // Child mode: publish until killed, telling the parent when frame time 0 went out.
  const { whipUrl, token } = JSON.parse(process.argv[3]!) as { whipUrl: string; token: string };
  const publisher = await publish({
    whipUrl,
    token,
    codec: 'h264',
    width: 1280,
    height: 720,
    fps: 30,
    bitrate: '4M',
    source: SOURCE,
  });
  if (publisher.status !== 201) throw new Error(`WHIP answered ${publisher.status}: ${publisher.error}`);
  const firstPacketAt = await publisher.firstPacketAt();
  process.stdout.write(`${JSON.stringify({ postedAt: publisher.postedAt, firstPacketAt })}\n`);
  process.on('SIGTERM', () => void publisher.stop().then(() => process.exit(0)));
} else {
  await main();
}
