// Low-Latency HLS (issue 16): one live process, one channel of one 720p30 rendition
// (2.5 Mbit/s, 1 s segments, 0.4 s parts), published by the werift test publisher of
// bench/live.ts (1280x720 H.264 whose frames carry their own time as a 20-bit strip).
//
// Viewers: BENCH_VIEWERS (500,1000,2000) LL-HLS clients (live-llhls-clients.ts), 500 to a child
// process, as hls.js does it: a blocking reload for the next part (`_HLS_msn` / `_HLS_part`), then
// every part it lacks (several when they came out together), each client with its own User-Agent
// (the per-client cap is 8 waiting requests) and its own keep-alive connection. The clients write
// their requests on raw sockets, each child's connections reading into one buffer (`onread`), and
// read only the status, Content-Length and Retry-After of each answer (and the playlist's text,
// parsed once per version): Node's HTTP client cost several times what the server spends per
// answer, so the clients gave out first. A client keeps up when it
// received at least 90 % of the parts made while it watched, and counts as admitted when it
// received any (a new client waits for room, and one the live process still has none for is
// answered 503 and asks again after Retry-After); how long the clients, all starting at once,
// waited for their first playlist is reported too. The live server's CPU (this process, and its
// viewer processes, which answer LL-HLS from memory: liveServerCpuMs), beyond what it spends
// without viewers (the publisher's ingest, the renditions' mirroring), and the clients' are
// measured over the same window. The clients share the machine's cores with the
// server, the encoder and the publisher: the count that keeps up is a floor for the server alone;
// the server's CPU per answered request (playlist or part) and per viewer-second say what it
// alone would hold (a viewer asks about five times a second: two and a half parts, as many
// reloads).
//
// Glass-to-glass, measured last: hls.js (node_modules/hls.js), configured as the console's channel
// screen configures it (HLS_PLAYER_CONFIG), plays the channel in Debian's Chromium; every 100 ms
// the page draws the frame the video element holds onto a canvas and reads the strip back (headless
// Chromium composites no video, so requestVideoFrameCallback is rare). Latency is that moment minus
// the moment the frame was made (the publisher's first RTP packet is frame time 0), over
// BENCH_SECONDS (20) of playback. hls.js moves its target latency back a second at each stall, so
// `hlsJsStalls` goes with it.
//
// BENCH_PEER=1: a fleet of two. The viewers (and hls.js) ask a second live process, on the same
// PostgreSQL (DATABASE_URL, else a throw-away one), which passes each file on to this one once
// and answers its viewers from what it kept (apps/live/src/hls/peer-cache.ts). This process's
// figures are then the holder's; the peer's CPU is reported beside them (`PeerCores`,
// `PeerMicrosecondsPerRequest`), under `live-llhls-fleet`.
//
// BENCH_TOKENS=1: the channel needs playback tokens (playback_token_required), and every viewer
// and hls.js ask with one (CreatePlaybackToken): each request's token is checked, and each
// playlist answered is rewritten to carry it. Reported under `live-llhls-tokens`. One token for
// all (minting one per viewer would meet the API's rate limit): a site minting one per viewer
// costs each viewer's first request one signature check more.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as HLS from 'hls-parser';
import { HLS_PLAYER_CONFIG } from '../apps/console/src/features/channel/hls-player.ts';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../e2e/support/chromium.ts';
import { cpuMsOf, median, quantile, report, round2, startPostgres, stopPostgres } from './lib.ts';
import type { ClientsReport, ClientsTask } from './live-llhls-clients.ts';
import {
  BITS,
  childMode,
  frameTime,
  liveServerCpuMs,
  pinChromium,
  startLiveBench,
  startLivePeer,
  startTimedPublisher,
} from './live-server.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const FLEET = process.env.BENCH_PEER === '1';
const TOKENS = process.env.BENCH_TOKENS === '1';
const VIEWER_STEPS = (process.env.BENCH_VIEWERS ?? '500,1000,2000').split(',').map(Number);
/**
 * Clients start this long before their window opens: their first blocking reloads, and the live
 * process's admission letting a crowd in as fast as it finds room (a few 1 s windows).
 */
const WARMUP_MS = 10_000;
const WINDOW_MS = 8_000;
const KEEPS_UP = 0.9;
const PARTS_AGED = 8;
/** The page reads the frame the video element holds this often. */
const SAMPLE_MS = 100;

const HLS_JS = fileURLToPath(new URL('../node_modules/hls.js/dist/hls.min.js', import.meta.url));
const PAGE = `<!doctype html><video muted playsinline style="width:1280px;height:720px"></video>
<script src="/hls.js"></script><script>
window.frames720 = [];
window.stalls = 0;
window.watch = (url) => {
  const video = document.querySelector('video');
  const hls = new Hls(${JSON.stringify(HLS_PLAYER_CONFIG)});
  hls.on(Hls.Events.ERROR, (event, data) => {
    if (data.details === Hls.ErrorDetails.BUFFER_STALLED_ERROR) window.stalls++;
  });
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

/**
 * Glass-to-glass of hls.js in Chromium: latencies (ms) of the frames shown, hls.js's own
 * latency, and its stalls from the start.
 */
async function glassToGlass(media: string, zero: number) {
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
  pinChromium();
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
    const { frames, stalls } = await page.evaluate(() => {
      const watched = globalThis as unknown as {
        frames720: { shownAt: number; ms: number; latency: number }[];
        stalls: number;
      };
      return { frames: watched.frames720, stalls: watched.stalls };
    });
    if (frames.length === 0) throw new Error('hls.js showed no frame');
    return {
      latencies: frames.map((frame) => frame.shownAt - (zero + frame.ms)),
      hlsJsLatencyMs: median(frames.map((frame) => frame.latency * 1000)),
      stalls,
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
  const init = Buffer.from(await (await fetch(signed('init.mp4', media))).arrayBuffer());
  const ages: number[] = [];
  let query: Record<string, string> = {};
  // Generous: on a loaded machine the encoder runs late and parts come in bursts.
  const deadline = Date.now() + 60_000;
  while (ages.length < PARTS_AGED) {
    if (Date.now() > deadline)
      throw new Error(`only ${ages.length} parts aged in 60 s: is the publisher gone?`);
    const answer = await fetch(signed('index.m3u8', media, query));
    if (!answer.ok) {
      query = {};
      await new Promise((resolve) => setTimeout(resolve, 100));
      continue;
    }
    const playlist = HLS.parse(await answer.text()) as HLS.types.MediaPlaylist;
    const open = playlist.segments.at(-1)!;
    const listed = open.parts.filter((part) => !part.hint);
    const newest = listed.at(-1) ?? playlist.segments.at(-2)!.parts.at(-1)!;
    const part = Buffer.from(await (await fetch(signed(newest.uri, media))).arrayBuffer());
    const arrivedAt = Date.now();
    // Only a part starting on a keyframe decodes alone. The first answer is the playlist as it
    // stood, not a part that just arrived.
    if (query._HLS_msn && newest.independent) {
      const file = join(scratch, `${new URL(newest.uri, media).pathname.split('/').at(-1)}.mp4`);
      writeFileSync(file, Buffer.concat([init, part]));
      ages.push(arrivedAt - (zero + (await frameTime(file))));
    }
    query = { _HLS_msn: String(open.mediaSequenceNumber), _HLS_part: String(listed.length) };
  }
  return ages;
}

/** `uri` of the rendition whose media playlist is `media`, with `query` and media's token, if any. */
function signed(uri: string, media: string, query: Record<string, string> = {}): URL {
  const url = new URL(uri, media);
  const token = new URL(media).searchParams.get('token');
  for (const [name, value] of Object.entries({ ...query, ...(token ? { token } : {}) }))
    url.searchParams.set(name, value);
  return url;
}

/** Clients per child process: each child is one JavaScript thread, so more children use both cores. */
const CLIENTS_PER_PROCESS = 500;

/**
 * `count` LL-HLS clients in child processes of CLIENTS_PER_PROCESS; resolves how many kept up,
 * this process's cores (the server) and the children's (the load generator), the server's CPU
 * per answer beyond the `idleCores` it spends without viewers, and the cores of the peer process
 * `peerPid` the clients ask, if any.
 */
async function viewers(media: string, count: number, idleCores: number, peerPid?: number) {
  const children = Array.from({ length: Math.ceil(count / CLIENTS_PER_PROCESS) }, (_, index) => {
    const first = index * CLIENTS_PER_PROCESS;
    return childMode(new URL('./live-llhls-clients.ts', import.meta.url), {
      media,
      first,
      count: Math.min(CLIENTS_PER_PROCESS, count - first),
      windowMs: WINDOW_MS,
    } satisfies ClientsTask);
  });
  // A child takes seconds to start on a loaded machine: the clock starts when all are ready.
  await Promise.all(children.map((child) => child.next()));
  const windowOpens = Date.now() + WARMUP_MS;
  const reporting = children.map(async (child) => {
    child.process.stdin!.write(`${windowOpens}\n`);
    return JSON.parse(await child.next()) as ClientsReport;
  });
  await new Promise((resolve) => setTimeout(resolve, WARMUP_MS));
  const cpuBefore = liveServerCpuMs();
  const peerCpuBefore = peerPid === undefined ? 0 : cpuMsOf(peerPid);
  await new Promise((resolve) => setTimeout(resolve, WINDOW_MS));
  const cpuMs = liveServerCpuMs() - cpuBefore;
  const peerCpuMs = peerPid === undefined ? 0 : cpuMsOf(peerPid) - peerCpuBefore;
  const reports = await Promise.all(reporting);
  // The parts made while the window was open, by the numbers any client saw, less the first and
  // the last: a client that asked a moment before the window opened (or after it closed) got
  // those outside it, and would read as having missed them.
  const received = reports.flatMap((report) => report.received);
  const numbers = received.flat();
  const first = numbers.reduce((low, part) => Math.min(low, part), Infinity) + 1;
  const last = numbers.reduce((high, part) => Math.max(high, part), -Infinity) - 1;
  const ratios = received.map(
    (parts) => parts.filter((part) => part >= first && part <= last).length / (last - first + 1),
  );
  const failures: Record<string, number> = {};
  for (const report of reports)
    for (const [status, times] of Object.entries(report.failures))
      failures[status] = (failures[status] ?? 0) + times;
  const requests = reports.reduce((sum, report) => sum + report.answers, 0);
  // How long the clients, all starting at once, waited for their first playlist: admission lets
  // a crowd in a window at a time.
  const firstPlaylistMs = reports
    .flatMap((report) => report.firstPlaylistMs)
    .filter((ms): ms is number => ms !== null);
  return {
    admitted: received.filter((parts) => parts.length > 0).length,
    firstPlaylistMedianMs: firstPlaylistMs.length ? median(firstPlaylistMs) : NaN,
    firstPlaylistP95Ms: firstPlaylistMs.length ? quantile(firstPlaylistMs, 0.95) : NaN,
    keptUp: ratios.filter((ratio) => ratio >= KEEPS_UP).length,
    medianShare: round2(median(ratios)),
    failures: Object.values(failures).reduce((sum, times) => sum + times, 0),
    failuresByStatus: failures,
    serverCores: round2(cpuMs / WINDOW_MS),
    peerCores: round2(peerCpuMs / WINDOW_MS),
    peerMicrosecondsPerRequest: Math.round((peerCpuMs * 1000) / Math.max(1, requests)),
    clientCores: round2(reports.reduce((sum, report) => sum + report.cpuMs, 0) / WINDOW_MS),
    requestsPerSecond: Math.round(requests / (WINDOW_MS / 1000)),
    serverMicrosecondsPerRequest: Math.round(((cpuMs - idleCores * WINDOW_MS) * 1e3) / Math.max(1, requests)),
    // As the WebRTC bench counts it: the server's CPU beyond what it spends without viewers,
    // divided by the viewers' shares of the parts summed (one that got half counts as half).
    serverCoreMsPerFullViewerSecond: round2(
      ((cpuMs / WINDOW_MS - idleCores) * 1000) /
        Math.max(
          ratios.reduce((sum, ratio) => sum + Math.min(1, ratio), 0),
          1e-9,
        ),
    ),
  };
}

async function main() {
  const postgres = FLEET ? await startPostgres() : undefined;
  const fleet = postgres && { databaseUrl: postgres.url, secretKey: randomBytes(32).toString('base64') };
  const { base, token, call, close } = await startLiveBench(undefined, fleet);
  const loadAtStart = loadavg()[0]!;
  let publisher: ReturnType<typeof startTimedPublisher> | undefined;
  let peer: Awaited<ReturnType<typeof startLivePeer>>['peer'] | undefined;
  try {
    // Where the viewers ask: this process, or its peer.
    let viewerBase = base;
    if (fleet) ({ peer, base: viewerBase } = await startLivePeer(fleet));
    const channelId = (
      await call('ImageFlux_20200316.CreateMultistreamChannelWithHLS', {
        hls: [{ durationSeconds: 1, video: { width: 1280, height: 720, fps: 30, bps: 2_500_000 } }],
        ...(TOKENS ? { playback_token_required: true } : {}),
      })
    ).channel_id as string;
    const minted = TOKENS
      ? await call('Ukiyo_20261125.CreatePlaybackToken', { channel_id: channelId, expires_in_seconds: 3_600 })
      : undefined;
    const signedQuery = minted ? `?token=${minted.token as string}` : '';
    publisher = startTimedPublisher(`${base}/whip/${channelId}`, token);
    let master: string | undefined;
    while (!master) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      const answer = await call('ImageFlux_20200207.ListPlaylistURLs', { channel_id: channelId });
      master = (answer.hls as { playlist_url: string }[])[0]?.playlist_url;
    }
    const mediaPath = new URL(master).pathname.replace(/master\.m3u8$/, '0/index.m3u8');
    const media = `${viewerBase}${mediaPath}${signedQuery}`;
    const zero = await publisher.zero;

    const figures: Record<string, number> = {};
    const targets: Record<string, string> = {};
    const ages = await partAges(media, zero);
    figures.partFirstFrameAgeMedianMs = Math.round(median(ages));
    // The publisher's ingest and the parts' gathering, with no viewer: not HLS serving.
    const idleBefore = liveServerCpuMs();
    await new Promise((resolve) => setTimeout(resolve, WINDOW_MS));
    const idleCores = (liveServerCpuMs() - idleBefore) / WINDOW_MS;
    figures.serverCoresWithoutViewers = round2(idleCores);
    for (const count of VIEWER_STEPS) {
      const step = await viewers(media, count, idleCores, peer?.child.pid);
      figures[`viewers${count}Admitted`] = step.admitted;
      figures[`viewers${count}FirstPlaylistMedianMs`] = step.firstPlaylistMedianMs;
      figures[`viewers${count}FirstPlaylistP95Ms`] = step.firstPlaylistP95Ms;
      figures[`viewers${count}KeptUp`] = step.keptUp;
      figures[`viewers${count}MedianShare`] = step.medianShare;
      figures[`viewers${count}Failures`] = step.failures;
      if (step.failures > 0)
        console.log(`${count} viewers: failed answers by status (0: none)`, step.failuresByStatus);
      figures[`viewers${count}ServerCores`] = step.serverCores;
      figures[`viewers${count}ClientCores`] = step.clientCores;
      figures[`viewers${count}RequestsPerSecond`] = step.requestsPerSecond;
      figures[`viewers${count}ServerMicrosecondsPerRequest`] = step.serverMicrosecondsPerRequest;
      figures[`viewers${count}ServerCoreMsPerFullViewerSecond`] = step.serverCoreMsPerFullViewerSecond;
      if (peer) {
        figures[`viewers${count}PeerCores`] = step.peerCores;
        figures[`viewers${count}PeerMicrosecondsPerRequest`] = step.peerMicrosecondsPerRequest;
      }
    }
    // Last: Playwright, in this process, turns on async context tracking (AsyncLocalStorage)
    // for good, which would tax every request the viewer steps measure.
    try {
      const { latencies, hlsJsLatencyMs, stalls } = await glassToGlass(
        `${viewerBase}${new URL(master).pathname}${signedQuery}`,
        zero,
      );
      figures.glassToGlassMedianMs = Math.round(median(latencies));
      figures.glassToGlassP95Ms = Math.round(quantile(latencies, 0.95));
      figures.samples = latencies.length;
      figures.hlsJsLatencyMedianMs = Math.round(hlsJsLatencyMs);
      figures.hlsJsStalls = stalls;
      targets.glassToGlassMedianMs = '<= 2000';
    } catch (error) {
      console.warn(`Chromium skipped: ${error instanceof Error ? error.message : String(error)}`);
    }
    targets[`viewers${Math.max(...VIEWER_STEPS)}KeptUp`] = `>= 2000 (of ${Math.max(...VIEWER_STEPS)})`;
    report(
      ['live-llhls', ...(FLEET ? ['fleet'] : []), ...(TOKENS ? ['tokens'] : [])].join('-'),
      {
        ...figures,
        // The CPUs the server had (BENCH_SERVER_CPUS in live-server.ts): the clients had the rest.
        serverCpus: availableParallelism(),
        // The machine's load (1 min) when the run started and ended: these figures move with it.
        loadavg1AtStart: round2(loadAtStart),
        loadavg1AtEnd: round2(loadavg()[0]!),
      },
      targets,
    );
  } finally {
    // A failed step leaves no publisher (and its ffmpeg) running.
    await publisher?.stop();
    await peer?.stop();
    await close();
    stopPostgres(postgres?.process ?? null);
  }
}

await main();
// The server deps' job queue keeps a supervision timer after its database is closed.
process.exit(0);
