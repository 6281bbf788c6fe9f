// Live ingest: publishers of every kind into a two-rung ladder (720p30 2.5 Mbit/s, 360p30
// 800 kbit/s, 1 s segments), each BENCH_RUNS times (3): over WHIP the werift test publisher
// (720p30 H.264 from ffmpeg), a real aiortc publisher (apps/live/test/aiortc-publisher.py,
// Debian's python3-aiortc) and Chromium (/usr/bin/chromium through playwright-core: a fake
// camera and microphone, RTCPeerConnection and fetch); sora-js-sdk in Chromium over Sora
// signaling; ffmpeg over RTMP and over SRT (720p30 H.264 + AAC). Time to the first playable
// segment (ListPlaylistURLs answers the playlist URL, polled every 50 ms) is taken from the
// publisher's start (WHIP POST, the SDK's connect, ffmpeg's start) and from the first keyframe
// the server received (its "publisher on air" log).
// Targets (issue 15): <= 2 s after the first keyframe for every kind; glass-to-glass <= 3 s;
// CPU per stream reported; 8 publishers at once on one process, all on air. A stack that cannot
// run here (no aiortc, no Chromium) is skipped.
//
// Glass-to-glass without OCR: the publisher overlays its own frame time as a 20-bit binary
// strip (black/white 32 px blocks, milliseconds) on top of the picture. The viewer side polls
// the 720p media playlist like a player at the live edge; when a segment appears it is
// downloaded, its first frame decoded and the strip read back. Latency is the moment the
// frame became viewable minus the moment it was generated (the publisher's first RTP packet
// is frame time 0). The publisher runs in a child process so the CPU figure is the server's.
//
// Eight at once: eight ffmpeg RTMP publishers each copy a pre-encoded 360p30 clip in a loop (so
// publishing costs next to nothing) into a 360p/180p ladder; every channel must go on air and
// keep writing a segment a second; CPU per stream is the packagers' and this process's.
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { onAirLog } from '../apps/live/test/on-air-log.ts';
import { publish } from '../apps/live/test/publisher.ts';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../e2e/support/chromium.ts';
import { servePublisherPage, type SoraPublished } from '../apps/live/test/sora-publisher.ts';
import { median, report } from './lib.ts';
import { BITS, frameTime, startLiveBench } from './live-server.ts';

const run = promisify(execFile);
const STRIP = `color=c=black:s=${BITS * 32}x32:r=30,format=gray,geq=lum='255*mod(floor(floor(T*1000+0.5)/pow(2\\,floor(X/32)))\\,2)'`;
const SOURCE = `testsrc2=size=1280x720:rate=30[bg];${STRIP}[code];[bg][code]overlay=0:0[out0]`;

interface Started {
  /** Wall clock of the WHIP POST. */
  postedAt: Promise<number>;
  stop(): Promise<void>;
}

/** A channel as CreateMultistreamChannelWithHLS answers it: where each kind publishes. */
interface Created {
  channel_id: string;
  sora_url: string;
  rtmp_url: string;
  stream_key: string;
  srt_url: string;
}

/** ffmpeg publishing the timed picture and a tone, H.264 + AAC, over RTMP (FLV) or SRT (MPEG-TS). */
function startFfmpeg(url: string, format: 'flv' | 'mpegts'): Started {
  const postedAt = Date.now();
  const child = spawn(
    'ffmpeg',
    [
      ...['-v', 'error', '-re', '-f', 'lavfi', '-i', SOURCE],
      ...['-re', '-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=48000'],
      ...['-c:v', 'libx264', '-preset', 'veryfast', '-tune', 'zerolatency', '-pix_fmt', 'yuv420p'],
      ...['-g', '60', '-b:v', '4M', '-c:a', 'aac', '-b:a', '128k', '-f', format, url],
    ],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    postedAt: Promise.resolve(postedAt),
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
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

/** CPU seconds (user + system) of a process from /proc. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** The packaging ffmpeg processes of this (server) process: they read from pipe:0. */
async function packagerPids(): Promise<number[]> {
  const { stdout } = await run('ps', ['-o', 'pid=,args=', '--ppid', String(process.pid)]);
  return stdout
    .split('\n')
    .filter((row) => row.includes('ffmpeg') && row.includes('pipe:0'))
    .map((row) => Number(row.trim().split(/\s+/)[0]));
}

/** Cores used over `ms` by the packagers and this process. */
async function coresOver(ms: number): Promise<number> {
  const pids = await packagerPids();
  if (pids.length === 0) throw new Error('no packaging ffmpeg');
  const before = pids.map(cpuSeconds);
  const nodeBefore = process.cpuUsage();
  const wallBefore = Date.now();
  await new Promise((resolve) => setTimeout(resolve, ms));
  const wall = (Date.now() - wallBefore) / 1000;
  const node = process.cpuUsage(nodeBefore);
  const ffmpeg = pids.reduce((sum, pid, i) => sum + cpuSeconds(pid) - before[i]!, 0);
  return (ffmpeg + (node.user + node.system) / 1e6) / wall;
}

const PYTHON = '/usr/bin/python3';
const AIORTC_PUBLISHER = fileURLToPath(new URL('../apps/live/test/aiortc-publisher.py', import.meta.url));

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
  | {
      start(whipUrl: string, token: string): Promise<Started>;
      /** sora-js-sdk publishing the fake camera over Sora signaling. */
      startSora(channel: Created, token: string): Promise<Started>;
      close(): Promise<void>;
    }
  | undefined
> {
  if (!existsSync(CHROMIUM_PATH)) return undefined;
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [...CHROMIUM_ARGS, '--use-fake-device-for-media-stream', '--use-fake-ui-for-media-stream'],
  });
  const pageServer = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(CHROMIUM_PAGE);
  });
  await new Promise<void>((resolve) => pageServer.listen(0, '127.0.0.1', resolve));
  const pageUrl = `http://127.0.0.1:${(pageServer.address() as { port: number }).port}/`;
  const soraSite = await servePublisherPage();
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
    async startSora(channel, token) {
      const page = await browser.newPage();
      await page.goto(soraSite.url);
      await page.waitForFunction(() => 'publish' in globalThis);
      const published = await page.evaluate(
        ([url, id, bearer]) =>
          (globalThis as unknown as { publish(...args: unknown[]): Promise<SoraPublished> }).publish(
            url,
            id,
            bearer,
            true,
          ),
        [channel.sora_url, channel.channel_id, token],
      );
      return { postedAt: Promise.resolve(published.connectedAt), stop: () => page.close() };
    },
    async close() {
      await browser.close();
      await new Promise((resolve) => pageServer.close(resolve));
      await soraSite.close();
    },
  };
}

const EIGHT = 8;

/** A ladder of 1 s segments at 30 fps: [width, height, video bps, audio bps] per rung. */
const ladderOf = (...rungs: [number, number, number, number][]) => ({
  hls: rungs.map(([width, height, bps, audio]) => ({
    durationSeconds: 1,
    video: { width, height, fps: 30, bps },
    audio: { bps: audio },
  })),
});

/**
 * Eight RTMP publishers at once on this live process, into a 360p/180p ladder: how many go on
 * air, the slowest channel's segments per second over 20 s of steady state (1 s segments: 1 is
 * real time), and the cores per stream.
 */
async function eightAtOnce(
  scratch: string,
  call: (target: string, body: unknown) => Promise<Record<string, unknown>>,
  listed: (channelId: string, since: number) => Promise<{ at: number; master: string }>,
  base: string,
): Promise<Record<string, number>> {
  const clip = join(scratch, 'clip.mp4');
  await run('ffmpeg', [
    ...['-v', 'error', '-f', 'lavfi', '-i', 'testsrc2=size=640x360:rate=30'],
    ...['-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=48000', '-t', '10'],
    ...['-c:v', 'libx264', '-preset', 'veryfast', '-g', '30', '-pix_fmt', 'yuv420p', '-b:v', '1M'],
    ...['-c:a', 'aac', '-shortest', '-y', clip],
  ]);
  const small = ladderOf([640, 360, 800_000, 64000], [320, 180, 300_000, 32000]);
  const channels: Created[] = [];
  for (let i = 0; i < EIGHT; i++) {
    channels.push(
      (await call('ImageFlux_20200316.CreateMultistreamChannelWithHLS', small)) as unknown as Created,
    );
  }
  const publishers = channels.map((channel) =>
    spawn(
      'ffmpeg',
      [
        ...['-v', 'error', '-re', '-stream_loop', '-1', '-i', clip, '-c', 'copy'],
        ...['-f', 'flv', `${channel.rtmp_url}/${channel.stream_key}`],
      ],
      { stdio: ['ignore', 'ignore', 'inherit'] },
    ),
  );
  try {
    const since = Date.now();
    const masters = await Promise.all(
      channels.map((channel) => listed(channel.channel_id, since).catch(() => undefined)),
    );
    const onAir = masters.filter(Boolean).length;
    const sequence = async (master: string) => {
      const media = `${base}${new URL(master).pathname.replace(/master\.m3u8$/, '1/index.m3u8')}`;
      const playlist = await (await fetch(media)).text();
      const first = Number(/#EXT-X-MEDIA-SEQUENCE:(\d+)/.exec(playlist)?.[1] ?? 0);
      // Whole LL-HLS segments (the open one has no URI line yet).
      return first + playlist.split('\n').filter((line) => line.endsWith('.m4s')).length;
    };
    const live = masters.filter((master): master is { at: number; master: string } => master !== undefined);
    const before = await Promise.all(live.map((master) => sequence(master.master)));
    const started = Date.now();
    const cores = await coresOver(20_000);
    const seconds = (Date.now() - started) / 1000;
    const after = await Promise.all(live.map((master) => sequence(master.master)));
    const slowest = Math.min(...after.map((count, i) => (count - before[i]!) / seconds));
    return {
      eightOnAir: onAir,
      eightSlowestSegmentsPerSecond: Math.round(slowest * 100) / 100,
      eightCpuCoresPerStream: Math.round((cores / EIGHT) * 100) / 100,
    };
  } finally {
    await Promise.all(
      publishers.map(
        (child) =>
          new Promise<void>((resolve) => (child.once('exit', () => resolve()), child.kill('SIGTERM'))),
      ),
    );
    for (const channel of channels)
      await call('ImageFlux_20180501.DeleteChannel', { channel_id: channel.channel_id });
  }
}

const aiortcUsable = () =>
  run(PYTHON, ['-c', 'import aiortc']).then(
    () => true,
    () => false,
  );

async function main() {
  // Each session logs "publisher on air" with its first keyframe, when its first segment is
  // listed: kept by channel; warnings and errors still reach stderr.
  const { log, firstKeyframes } = onAirLog(40);
  const { base, token, call, close } = await startLiveBench(log);
  const ladder = ladderOf([1280, 720, 2_500_000, 128000], [640, 360, 800_000, 64000]);

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
  const whip = (channel: Created) => `${base}/whip/${channel.channel_id}`;
  const stacks: [string, (channel: Created) => Promise<Started>][] = [
    [
      'werift',
      async (channel) => {
        const publisher = startPublisher(whip(channel), token);
        return { postedAt: publisher.times.then((times) => times.postedAt), stop: publisher.stop };
      },
    ],
  ];
  if (await aiortcUsable()) stacks.push(['aiortc', async (channel) => startAiortc(whip(channel), token)]);
  else console.warn(`aiortc skipped: ${PYTHON} cannot import aiortc`);
  if (chromium) {
    stacks.push(['chromium', (channel) => chromium.start(whip(channel), token)]);
    stacks.push(['sora', (channel) => chromium.startSora(channel, token)]);
  }
  stacks.push(
    ['rtmp', async (channel) => startFfmpeg(`${channel.rtmp_url}/${channel.stream_key}`, 'flv')],
    ['srt', async (channel) => startFfmpeg(channel.srt_url, 'mpegts')],
  );

  try {
    for (const [stack, start] of stacks) {
      const fromPost: number[] = [];
      const fromKeyframe: number[] = [];
      let failures = 0;
      for (let round = 0; round < runs; round++) {
        const channel = (await call(
          'ImageFlux_20200316.CreateMultistreamChannelWithHLS',
          ladder,
        )) as unknown as Created;
        const channelId = channel.channel_id;
        const spawned = Date.now();
        const publisher = await start(channel).catch((error: unknown) => {
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
          `${stack} run ${round + 1}: first segment listed ${playable.at - postedAt} ms after the start, ` +
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
    const init = Buffer.from(await (await fetch(media.replace(/index\.m3u8$/, 'init.mp4'))).arrayBuffer());
    const until = Date.now() + 12_000;
    let first = true;
    while (Date.now() < until) {
      // Whole LL-HLS segments (fMP4): each decodes after the rendition's init segment.
      const names = (await (await fetch(media)).text()).split('\n').filter((line) => line.endsWith('.m4s'));
      for (const name of names) {
        if (seen.has(name)) continue;
        seen.add(name);
        if (first) continue; // segments already there when we started are not "new"
        const data = Buffer.from(await (await fetch(media.replace(/index\.m3u8$/, name))).arrayBuffer());
        const viewable = Date.now();
        const file = join(scratch, `${name}.mp4`);
        await writeFile(file, Buffer.concat([init, data]));
        latencies.push(viewable - (zero + (await frameTime(file))));
      }
      first = false;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }

    // CPU of the packaging ffmpeg and of this (server) process over 20 s of steady state.
    const cpuCores = await coresOver(20_000);
    await publisher.stop();
    await call('ImageFlux_20180501.DeleteChannel', { channel_id: channelId });

    const eight = await eightAtOnce(scratch, call, listed, base);

    report(
      'live',
      {
        ...figures,
        glassToGlassMedianMs: median(latencies),
        glassToGlassMaxMs: Math.max(...latencies),
        cpuCoresPerStream: Math.round(cpuCores * 100) / 100,
        ...eight,
        // The machine's load (1 min) when the run started and ended: these figures move with it.
        loadavg1AtStart: Math.round(loadAtStart * 100) / 100,
        loadavg1AtEnd: Math.round(loadavg()[0]! * 100) / 100,
      },
      { ...targets, glassToGlassMedianMs: '<= 3000', eightOnAir: '8' },
    );
  } finally {
    await chromium?.close();
    await close();
  }
}

if (process.argv[2] === '--publish') {
  // Child mode: publish until killed, telling the parent when frame time 0 went out (by then).
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
  await publisher.firstPacketAt();
  // Three seconds of paced packets place frame time 0 within a frame's encode (frameTimeZero).
  await new Promise((resolve) => setTimeout(resolve, 3000));
  const firstPacketAt = publisher.frameTimeZero();
  process.stdout.write(`${JSON.stringify({ postedAt: publisher.postedAt, firstPacketAt })}\n`);
  process.on('SIGTERM', () => void publisher.stop().then(() => process.exit(0)));
} else {
  await main();
}
