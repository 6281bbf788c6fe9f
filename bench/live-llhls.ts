// Low-Latency HLS (issue 16): one live process, one channel of one 720p30 rendition
// (2.5 Mbit/s, 1 s segments, 0.4 s parts), published by the werift test publisher of
// bench/live.ts (1280x720 H.264 whose frames carry their own time as a 20-bit strip).
//
// Glass-to-glass: hls.js (node_modules/hls.js, lowLatencyMode) in Debian's Chromium plays the
// channel; every 100 ms the page draws the frame the video element holds onto a canvas and reads
// the strip back (headless Chromium composites no video, so requestVideoFrameCallback is rare).
// Latency is that moment minus the moment the frame was made (the publisher's first RTP packet is
// frame time 0), over BENCH_SECONDS (20) of playback.
//
// Viewers: child processes of BENCH_VIEWERS (500,1000,2000) LL-HLS clients each, as hls.js
// does it: a blocking reload for the next part (`_HLS_msn` / `_HLS_part`), then that part,
// each client with its own User-Agent (the per-client cap is 8 waiting requests). A client keeps
// up when it received at least 90 % of the parts made while it watched; the live process's CPU
// (this process: HTTP serving from memory) is measured over the same window. The clients share
// the machine's cores with the server, the encoder and the publisher: the count that keeps up
// is a floor for the server alone; the server's CPU per answered request (playlist or part) says
// what it alone would hold (a viewer asks about six a second: three parts, three reloads).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, Agent, get as httpGet } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as HLS from 'hls-parser';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../e2e/support/chromium.ts';
import { report, round2 } from './lib.ts';
import { BITS, frameTime, startLiveBench, startTimedPublisher } from './live-server.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const VIEWER_STEPS = (process.env.BENCH_VIEWERS ?? '500,1000,2000').split(',').map(Number);
/** Clients start over this long before their window opens (their first blocking reloads). */
const WARMUP_MS = 4_000;
const WINDOW_MS = 8_000;
const KEEPS_UP = 0.9;
const PARTS_AGED = 8;
/** The page reads the frame the video element holds this often. */
const SAMPLE_MS = 100;

const HLS_JS = fileURLToPath(new URL('../node_modules/hls.js/dist/hls.min.js', import.meta.url));
const PAGE = `<!doctype html><video muted playsinline style="width:1280px;height:720px"></video>
<script src="/hls.js"></script><script>
window.frames720 = [];
window.watch = (url) => {
  const video = document.querySelector('video');
  const hls = new Hls({ lowLatencyMode: true });
  hls.loadSource(url);
  hls.attachMedia(video);
  video.play();
  const canvas = document.createElement('canvas');
  canvas.width = ${BITS * 32};
  canvas.height = 32;
  const context = canvas.getContext('2d', { willReadFrequently: true });
  setInterval(() => {
    if (video.paused || video.readyState < 2) return;
    context.drawImage(video, 0, 0, ${BITS * 32}, 32, 0, 0, ${BITS * 32}, 32);
    const pixels = context.getImageData(0, 16, ${BITS * 32}, 1).data;
    let ms = 0;
    for (let bit = 0; bit < ${BITS}; bit++) if (pixels[(bit * 32 + 16) * 4] > 128) ms += 2 ** bit;
    window.frames720.push({ shownAt: Date.now(), ms, latency: hls.latency });
  }, ${SAMPLE_MS});
};
</script>`;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** Glass-to-glass of hls.js in Chromium: latencies (ms) of the frames shown, and hls.js's own latency. */
async function glassToGlass(media: string, zero: number) {
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
  const site = createServer((req, res) => {
    const script = req.url === '/hls.js';
    res.writeHead(200, { 'content-type': script ? 'text/javascript' : 'text/html' });
    res.end(script ? readFileSync(HLS_JS) : PAGE);
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  try {
    const page = await browser.newPage();
    await page.goto(`http://127.0.0.1:${(site.address() as { port: number }).port}/`);
    await page.evaluate((url) => (globalThis as unknown as { watch(u: string): void }).watch(url), media);
    // The first seconds are hls.js settling on the live edge.
    await page.waitForTimeout(5_000);
    await page.evaluate(() => ((globalThis as unknown as { frames720: unknown[] }).frames720.length = 0));
    await page.waitForTimeout(SECONDS * 1000);
    const frames = await page.evaluate(
      () =>
        (globalThis as unknown as { frames720: { shownAt: number; ms: number; latency: number }[] })
          .frames720,
    );
    if (frames.length === 0) throw new Error('hls.js showed no frame');
    return {
      latencies: frames.map((frame) => frame.shownAt - (zero + frame.ms)),
      hlsJsLatencyMs: median(frames.map((frame) => frame.latency * 1000)),
    };
  } finally {
    await browser.close();
    site.close();
  }
}

/**
 * How old each of PARTS_AGED new independent parts' first frame (a keyframe) is when a blocking
 * reload lists the part and the part arrives: the pipeline's share of glass-to-glass (the player's hold-back is the rest).
 * The first frame was made about one part duration before the part could close.
 */
async function partAges(media: string, zero: number): Promise<number[]> {
  const scratch = mkdtempSync(join(tmpdir(), 'ukiyo-bench-part-'));
  const init = Buffer.from(await (await fetch(new URL('init.mp4', media))).arrayBuffer());
  const ages: number[] = [];
  let query = '';
  const deadline = Date.now() + 30_000;
  while (ages.length < PARTS_AGED) {
    if (Date.now() > deadline)
      throw new Error(`only ${ages.length} parts aged in 30 s: is the publisher gone?`);
    const answer = await fetch(`${media}${query}`);
    if (!answer.ok) {
      query = '';
      await new Promise((resolve) => setTimeout(resolve, 100));
      continue;
    }
    const playlist = HLS.parse(await answer.text()) as HLS.types.MediaPlaylist;
    const open = playlist.segments.at(-1)!;
    const listed = open.parts.filter((part) => !part.hint);
    const newest = listed.at(-1) ?? playlist.segments.at(-2)!.parts.at(-1)!;
    const part = Buffer.from(await (await fetch(new URL(newest.uri, media))).arrayBuffer());
    const arrivedAt = Date.now();
    // Only a part starting on a keyframe decodes alone. The first answer is the playlist as it
    // stood, not a part that just arrived.
    if (query && newest.independent) {
      const file = join(scratch, `${newest.uri}.mp4`);
      writeFileSync(file, Buffer.concat([init, part]));
      ages.push(arrivedAt - (zero + (await frameTime(file))));
    }
    query = `?_HLS_msn=${open.mediaSequenceNumber}&_HLS_part=${listed.length}`;
  }
  return ages;
}

/** `count` LL-HLS clients in a child process; resolves how many kept up, and this process's cores. */
async function viewers(media: string, count: number) {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', fileURLToPath(import.meta.url), '--viewers', JSON.stringify({ media, count })],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise((resolve) => setTimeout(resolve, WARMUP_MS));
  const cpuBefore = process.cpuUsage();
  await new Promise((resolve) => setTimeout(resolve, WINDOW_MS));
  const cpu = process.cpuUsage(cpuBefore);
  await exited;
  const { ratios, parts, failures } = JSON.parse(output) as {
    ratios: number[];
    parts: number;
    failures: Record<string, number>;
  };
  // Each part a client received took two answers: the (blocking) playlist and the part.
  const requests = 2 * parts;
  return {
    keptUp: ratios.filter((ratio) => ratio >= KEEPS_UP).length,
    medianShare: round2(median(ratios)),
    failures: Object.values(failures).reduce((sum, count) => sum + count, 0),
    failuresByStatus: failures,
    serverCores: round2((cpu.user + cpu.system) / 1e3 / WINDOW_MS),
    requestsPerSecond: Math.round(requests / (WINDOW_MS / 1000)),
    serverMicrosecondsPerRequest: Math.round((cpu.user + cpu.system) / Math.max(1, requests)),
  };
}

async function main() {
  const { live, database, base, token, call } = await startLiveBench();
  const loadAtStart = loadavg()[0]!;
  try {
    const channelId = (
      await call('ImageFlux_20200316.CreateMultistreamChannelWithHLS', {
        hls: [{ durationSeconds: 1, video: { width: 1280, height: 720, fps: 30, bps: 2_500_000 } }],
      })
    ).channel_id as string;
    const publisher = startTimedPublisher(`${base}/whip/${channelId}`, token);
    let master: string | undefined;
    while (!master) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      const answer = await call('ImageFlux_20200207.ListPlaylistURLs', { channel_id: channelId });
      master = (answer.hls as { playlist_url: string }[])[0]?.playlist_url;
    }
    const media = `${base}${new URL(master).pathname.replace(/master\.m3u8$/, '0/index.m3u8')}`;
    const zero = await publisher.zero;

    const figures: Record<string, number> = {};
    const targets: Record<string, string> = {};
    try {
      const { latencies, hlsJsLatencyMs } = await glassToGlass(`${base}${new URL(master).pathname}`, zero);
      figures.glassToGlassMedianMs = Math.round(median(latencies));
      figures.glassToGlassP95Ms = Math.round(
        [...latencies].sort((a, b) => a - b)[Math.floor(latencies.length * 0.95)]!,
      );
      figures.samples = latencies.length;
      figures.hlsJsLatencyMedianMs = Math.round(hlsJsLatencyMs);
      targets.glassToGlassMedianMs = '<= 2000';
    } catch (error) {
      console.warn(`Chromium skipped: ${error instanceof Error ? error.message : String(error)}`);
    }
    const ages = await partAges(media, zero);
    figures.partFirstFrameAgeMedianMs = Math.round(median(ages));
    for (const count of VIEWER_STEPS) {
      const step = await viewers(media, count);
      figures[`viewers${count}KeptUp`] = step.keptUp;
      figures[`viewers${count}MedianShare`] = step.medianShare;
      figures[`viewers${count}Failures`] = step.failures;
      if (step.failures > 0)
        console.log(`${count} viewers: failed answers by status (0: none)`, step.failuresByStatus);
      figures[`viewers${count}ServerCores`] = step.serverCores;
      figures[`viewers${count}RequestsPerSecond`] = step.requestsPerSecond;
      figures[`viewers${count}ServerMicrosecondsPerRequest`] = step.serverMicrosecondsPerRequest;
    }
    targets[`viewers${Math.max(...VIEWER_STEPS)}KeptUp`] = `>= 2000 (of ${Math.max(...VIEWER_STEPS)})`;
    await publisher.stop();
    report(
      'live-llhls',
      {
        ...figures,
        // The machine's load (1 min) when the run started and ended: these figures move with it.
        loadavg1AtStart: round2(loadAtStart),
        loadavg1AtEnd: round2(loadavg()[0]!),
      },
      targets,
    );
  } finally {
    await live.close();
    await database.close();
  }
}

/**
 * Child mode: `count` clients reloading with `_HLS_msn` / `_HLS_part` and fetching each new
 * part for WARMUP_MS + WINDOW_MS; prints each client's share of the parts made in the window.
 */
async function runViewers({ media, count }: { media: string; count: number }) {
  // A socket per waiting request: a blocking reload holds its socket until it is answered.
  const agent = new Agent({ keepAlive: true, maxSockets: Infinity });
  const fetchText = (url: string, userAgent: string) =>
    new Promise<{ status: number; body: Buffer }>((resolve, reject) => {
      httpGet(url, { agent, headers: { 'User-Agent': userAgent } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      }).on('error', reject);
    });
  const partNumber = (uri: string) => Number(/part(\d+)\.m4s$/.exec(uri)?.[1]);
  const started = Date.now();
  const windowOpens = started + WARMUP_MS;
  const windowCloses = windowOpens + WINDOW_MS;
  /** Failed answers by status (0: no answer). */
  const failures: Record<number, number> = {};
  const failed = (status: number | undefined) => {
    failures[status ?? 0] = (failures[status ?? 0] ?? 0) + 1;
    return new Promise((resolve) => setTimeout(resolve, 100));
  };
  // Every client gets the same few playlist versions: each is parsed once.
  const parsed = new Map<string, HLS.types.MediaPlaylist>();
  const parse = (text: string) => {
    let playlist = parsed.get(text);
    if (!playlist) {
      if (parsed.size > 16) parsed.clear();
      playlist = HLS.parse(text) as HLS.types.MediaPlaylist;
      parsed.set(text, playlist);
    }
    return playlist;
  };
  let firstMade: number | undefined;
  let lastMade = 0;
  const received = Array.from({ length: count }, () => 0);
  const client = async (index: number) => {
    const userAgent = `llhls-bench/${index}`;
    let query = '';
    while (Date.now() < windowCloses) {
      const answer = await fetchText(`${media}${query}`, userAgent).catch(() => undefined);
      if (answer?.status !== 200) {
        await failed(answer?.status);
        query = '';
        continue;
      }
      const playlist = parse(answer.body.toString('utf8'));
      const open = playlist.segments.at(-1)!;
      const listed = open.parts.filter((part) => !part.hint);
      const newest = listed.at(-1) ?? playlist.segments.at(-2)!.parts.at(-1)!;
      const part = await fetchText(new URL(newest.uri, media).href, userAgent).catch(() => undefined);
      const now = Date.now();
      if (part?.status === 200 && now >= windowOpens) {
        received[index]!++;
        firstMade ??= partNumber(newest.uri);
        lastMade = Math.max(lastMade, partNumber(newest.uri));
      } else if (part?.status !== 200) await failed(part?.status);
      query = `?_HLS_msn=${open.mediaSequenceNumber}&_HLS_part=${listed.length}`;
    }
  };
  await Promise.all(received.map((_, index) => client(index)));
  const made = lastMade - (firstMade ?? lastMade) + 1;
  const parts = received.reduce((sum, count) => sum + count, 0);
  process.stdout.write(JSON.stringify({ ratios: received.map((count) => count / made), parts, failures }));
  agent.destroy();
}

if (process.argv[2] === '--viewers') {
  await runViewers(JSON.parse(process.argv[3]!) as { media: string; count: number });
} else {
  await main();
  // The server deps' job queue keeps a supervision timer after its database is closed.
  process.exit(0);
}
