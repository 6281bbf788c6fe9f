// WebRTC viewers (issue 16): one live process, one channel published over WHIP by the werift
// test publisher of bench/live.ts (1280x720 30 fps H.264 at 4 Mbit/s whose frames carry their
// own time as a 20-bit strip). Its ladder is one small rendition (160x90), so the HLS encode
// costs little: WebRTC viewers get the publisher's own 720p RTP, forwarded (no transcoding).
//
// Glass-to-glass: Debian's Chromium views the channel over WHEP (a plain RTCPeerConnection);
// every 100 ms the page draws the frame the video element holds onto a canvas and reads the
// strip back. Latency is that moment minus the moment the frame was made (the publisher's first
// RTP packet is frame time 0), over BENCH_SECONDS (20) of playback.
//
// Viewers per process: BENCH_VIEWERS (10,50,100,200,300) werift WHEP viewers, 100 to a child
// process, opened ten at a time; once all are connected, all processes measure over WINDOW_MS:
// the live server's CPU (this process, and its viewer processes: forwarding, SRTP and sending in
// libdatachannel, as many as LIVE_VIEWER_PROCESSES in the environment says, one per core unless
// set, 0 for this process alone; not the ladder's one ffmpeg), the viewers' processes' CPU, and
// each viewer's received RTP bytes against what the publisher sends: the bytes the server took
// in meanwhile, or as many as it took in without viewers if more (a server too busy to read its
// socket loses the publisher's packets, and its viewers' shares of what little got in would read
// full). A viewer keeps up when it received at least 90 % of them. A viewer counts the SRTP
// packets its ICE connection receives without decrypting them (live-webrtc-viewers.ts): werift
// decrypting for every viewer cost about what the server spends encrypting, so the viewers
// saturated the machine first. All but BENCH_WATCHED_VIEWERS (20; `all` for none) of a step's
// viewers are sinks (viewer-sinks.ts: root and nftables, else every viewer counts), whose media
// the kernel drops as the server sends it: on loopback each send would also run the receiver's
// side of the kernel and wake its client, and 200 viewers' clients then cost the 2 cores as much
// as the server. So the server has the machine's cores as it would with its viewers elsewhere,
// less the counting viewers and the publisher. BENCH_SERVER_CPUS=0 gives the server (and the
// native floor) one core of its own and the clients the other (live-server.ts), for what one
// core of the server keeps up with. A viewer the server refuses for want of room (503) tries
// again once after Retry-After; `Connected` counts the viewers the server took.
//
// The native floor, once the live server has stopped: peers/native-sfu.mjs, libdatachannel's
// C++ ICE, DTLS and SRTP sending a stream of the publisher's measured bitrate to the same steps
// of the same viewers, with none of our logic (no keyframe wait, NACK history, congestion or
// processes of ours). `floorViewers…` are its figures, `viewers…FloorRatio` our core-ms per full
// viewer-second against its own, as bench/edge sets hits against nginx.
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { availableParallelism, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../e2e/support/chromium.ts';
import { cpuMsOf, median, portBase, quantile, report, round2, waitUntil } from './lib.ts';
import {
  BITS,
  childMode,
  liveServerCpuMs,
  pinChromium,
  startLiveBench,
  startTimedPublisher,
} from './live-server.ts';
import type { ViewersTask } from './live-webrtc-viewers.ts';
import { dropSinkMedia, type SinkCounts } from './viewer-sinks.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const VIEWER_STEPS = (process.env.BENCH_VIEWERS ?? '10,50,100,200,300').split(',').map(Number);
const WINDOW_MS = 8_000;
const KEEPS_UP = 0.9;
const SAMPLE_MS = 100;

const PAGE = `<!doctype html><video muted playsinline autoplay style="width:1280px;height:720px"></video>
<script>
window.shown = [];
window.watch = async (url) => {
  const video = document.querySelector('video');
  const pc = new RTCPeerConnection();
  const stream = new MediaStream();
  pc.ontrack = (event) => stream.addTrack(event.track);
  pc.addTransceiver('video', { direction: 'recvonly' });
  pc.addTransceiver('audio', { direction: 'recvonly' });
  await pc.setLocalDescription(await pc.createOffer());
  await new Promise((resolve) => {
    if (pc.iceGatheringState === 'complete') return resolve();
    pc.onicegatheringstatechange = () => pc.iceGatheringState === 'complete' && resolve();
    setTimeout(resolve, 3000);
  });
  const answer = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/sdp' }, body: pc.localDescription.sdp });
  await pc.setRemoteDescription({ type: 'answer', sdp: await answer.text() });
  video.srcObject = stream;
  const canvas = document.createElement('canvas');
  canvas.width = ${BITS * 32};
  canvas.height = 32;
  const context = canvas.getContext('2d', { willReadFrequently: true });
  setInterval(() => {
    if (video.readyState < 2) return;
    context.drawImage(video, 0, 0, ${BITS * 32}, 32, 0, 0, ${BITS * 32}, 32);
    const pixels = context.getImageData(0, 16, ${BITS * 32}, 1).data;
    let ms = 0;
    for (let bit = 0; bit < ${BITS}; bit++) if (pixels[(bit * 32 + 16) * 4] > 128) ms += 2 ** bit;
    window.shown.push({ shownAt: Date.now(), ms });
  }, ${SAMPLE_MS});
};
</script>`;

/** Glass-to-glass over WHEP in Chromium: latencies (ms) of the frames shown. */
async function glassToGlass(whepUrl: string, zero: number): Promise<number[]> {
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
  pinChromium();
  const site = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html' });
    response.end(PAGE);
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  try {
    const page = await browser.newPage();
    await page.goto(`http://127.0.0.1:${(site.address() as { port: number }).port}/`);
    await page.evaluate(
      (url) => (globalThis as unknown as { watch(u: string): Promise<void> }).watch(url),
      whepUrl,
    );
    await page.waitForTimeout(3_000);
    await page.evaluate(() => ((globalThis as unknown as { shown: unknown[] }).shown.length = 0));
    await page.waitForTimeout(SECONDS * 1000);
    const shown = await page.evaluate(
      () => (globalThis as unknown as { shown: { shownAt: number; ms: number }[] }).shown,
    );
    return shown.map((frame) => frame.shownAt - (zero + frame.ms));
  } finally {
    await browser.close();
    site.close();
  }
}

/** Bytes the live server took in from publishers so far (its ingest counter). */
type LiveBench = Awaited<ReturnType<typeof startLiveBench>>;

async function ingestBytes(live: LiveBench['live']): Promise<number> {
  const metric = await live.metrics.getSingleMetric('ukiyo_live_ingest_bytes_total')!.get();
  return metric.values[0]?.value ?? 0;
}

/** Viewers per child process: each child is one JavaScript thread reading its viewers' sockets. */
const VIEWERS_PER_PROCESS = 100;

/** A run's sinks: how many viewers of a step count what they receive, the others' counts. */
interface Sinks {
  watched: number;
  counts: SinkCounts;
}

/** The sinks' rule in place, unless BENCH_WATCHED_VIEWERS is `all` (or it cannot be: says why). */
function sinksOf(): Sinks | undefined {
  const watched = process.env.BENCH_WATCHED_VIEWERS ?? '20';
  if (watched === 'all') return undefined;
  const counts = dropSinkMedia();
  if (typeof counts === 'string') {
    console.warn(`sinks skipped (every viewer counts what it receives): ${counts}`);
    return undefined;
  }
  return { watched: Number(watched), counts };
}

/**
 * A forwarding server as a step of viewers measures it: its CPU time so far (ms), the bytes of
 * the stream it forwards so far, and with no viewer its CPU (cores) and stream (bytes per ms,
 * the least a step's stream is taken to be: see viewerStep).
 */
interface Forwarder {
  whepUrl: string;
  cpuMs(): number;
  streamBytes(): Promise<number>;
  idle: { cores: number; streamBytesPerMs: number };
}

/** The forwarder's CPU and stream over WINDOW_MS with no viewer. */
async function idleOf(forwarder: Omit<Forwarder, 'idle'>): Promise<Forwarder['idle']> {
  const [cpuBefore, streamBefore] = [forwarder.cpuMs(), await forwarder.streamBytes()];
  await new Promise((resolve) => setTimeout(resolve, WINDOW_MS));
  return {
    cores: (forwarder.cpuMs() - cpuBefore) / WINDOW_MS,
    streamBytesPerMs: ((await forwarder.streamBytes()) - streamBefore) / WINDOW_MS,
  };
}

/** `count` viewers: counting ones, and beyond `sinks.watched` of them sinks (viewer-sinks.ts). */
async function viewerStep(forwarder: Forwarder, count: number, sinks?: Sinks) {
  const { whepUrl, idle } = forwarder;
  const watched = Math.min(count, sinks?.watched ?? count);
  const tasks: ViewersTask[] = Array.from(
    { length: Math.ceil(watched / VIEWERS_PER_PROCESS) },
    (_, index) => ({
      whepUrl,
      count: Math.min(VIEWERS_PER_PROCESS, watched - index * VIEWERS_PER_PROCESS),
    }),
  );
  // Sinks cost their process only their handshakes and consent checks: one process takes them all.
  if (count > watched) tasks.push({ whepUrl, count: count - watched, sinks: true });
  const children = tasks.map((task) => childMode(new URL('./live-webrtc-viewers.ts', import.meta.url), task));
  const childrenReady = await Promise.all(
    children.map(
      async (viewers) => JSON.parse(await viewers.next()) as { connected: number; sinkPorts: number[] },
    ),
  );
  const connected = childrenReady.reduce((sum, child) => sum + child.connected, 0);
  // Every child counts from here, once all are connected: one window for the viewers and the server.
  for (const viewers of children) viewers.process.stdin!.write('start\n');
  sinks?.counts.reset();
  const cpuBefore = forwarder.cpuMs();
  const streamBefore = await forwarder.streamBytes();
  await new Promise((resolve) => setTimeout(resolve, WINDOW_MS));
  const serverCores = (forwarder.cpuMs() - cpuBefore) / WINDOW_MS;
  const streamed = (await forwarder.streamBytes()) - streamBefore;
  const reports = await Promise.all(
    children.map(async (viewers) => {
      viewers.process.stdin!.write('report\n');
      return JSON.parse(await viewers.next()) as { received: number[]; tag: number; cpuMs: number };
    }),
  );
  const received = reports.flatMap((report) => report.received);
  if (count > watched) {
    // One port per sink that got anything; a sink the server sent nothing got a share of 0. The
    // ports of an earlier step's sinks are left out: the server sends to those until it finds
    // them gone.
    const { connected: connectedSinks, sinkPorts } = childrenReady.at(-1)!;
    const ports = new Set(sinkPorts);
    const perPort = [...sinks!.counts.read(Math.max(...reports.map((report) => report.tag)))]
      .filter(([port]) => ports.has(port))
      .map(([, bytes]) => bytes);
    received.push(...perPort, ...Array<number>(Math.max(0, connectedSinks - perPort.length)).fill(0));
  }
  const published = Math.max(streamed, idle.streamBytesPerMs * WINDOW_MS);
  const shares = received.map((bytes) => bytes / published);
  return {
    sinks: count - watched,
    connected,
    keptUp: shares.filter((share) => share >= KEEPS_UP).length,
    // Shares are of what the publisher got through: this says it kept its 4 Mbit/s meanwhile.
    streamMbps: round2((streamed * 8) / (WINDOW_MS * 1000)),
    medianShare: round2(median(shares)),
    serverCores: round2(serverCores),
    clientCores: round2(reports.reduce((sum, report) => sum + report.cpuMs, 0) / WINDOW_MS),
    // Forwarding cost of one viewer receiving the whole stream: the server's CPU beyond what it
    // spends without viewers, divided by the viewers' shares of the stream summed (a viewer that
    // took in half of it counts as half a viewer).
    serverCoreMsPerFullViewerSecond: round2(
      ((serverCores - idle.cores) * 1000) /
        Math.max(
          shares.reduce((sum, share) => sum + share, 0),
          1e-9,
        ),
    ),
  };
}

/** A step's figures, each named `prefix` and what it is (`viewers200KeptUp`). */
function record(
  figures: Record<string, number>,
  prefix: string,
  step: Awaited<ReturnType<typeof viewerStep>>,
) {
  if (step.sinks > 0) figures[`${prefix}Sinks`] = step.sinks;
  figures[`${prefix}Connected`] = step.connected;
  figures[`${prefix}KeptUp`] = step.keptUp;
  figures[`${prefix}MedianShare`] = step.medianShare;
  // What the forwarder had to send meanwhile: for the live server, what it took in.
  figures[`${prefix}IngestMbps`] = step.streamMbps;
  figures[`${prefix}ServerCores`] = step.serverCores;
  figures[`${prefix}ClientCores`] = step.clientCores;
  figures[`${prefix}ServerCoreMsPerFullViewerSecond`] = step.serverCoreMsPerFullViewerSecond;
}

async function main() {
  const loadAtStart = loadavg()[0]!;
  const figures: Record<string, number> = {};
  const sinks = sinksOf();
  try {
    const streamBytesPerMs = await measureServer(figures, sinks);
    // The floor runs once the live server and its publisher have stopped.
    await measureFloor(streamBytesPerMs, figures, sinks);
  } finally {
    sinks?.counts.close();
  }
  if (sinks) figures.watchedViewers = sinks.watched;
  report(
    'live-webrtc',
    {
      ...figures,
      // The CPUs the server had (BENCH_SERVER_CPUS in live-server.ts): the clients had the rest.
      serverCpus: availableParallelism(),
      // The machine's load (1 min) when the run started and ended: these figures move with it.
      loadavg1AtStart: round2(loadAtStart),
      loadavg1AtEnd: round2(loadavg()[0]!),
    },
    {
      glassToGlassMedianMs: '<= 500',
      [`viewers${Math.max(...VIEWER_STEPS)}KeptUp`]: '>= 200 on 2 cores',
    },
  );
}

/** The live server with its publisher, into `figures`; resolves the stream's bytes per ms. */
async function measureServer(figures: Record<string, number>, sinks?: Sinks): Promise<number> {
  const { live, base, token, call, close } = await startLiveBench();
  try {
    const channelId = (
      await call('ImageFlux_20200316.CreateMultistreamChannelWithHLS', {
        hls: [{ durationSeconds: 1, video: { width: 160, height: 90, fps: 15, bps: 100_000 } }],
      })
    ).channel_id as string;
    const publisher = startTimedPublisher(`${base}/whip/${channelId}`, token);
    try {
      return await measure(live, `${base}/whep/${channelId}`, await publisher.zero, figures, sinks);
    } finally {
      await publisher.stop();
    }
  } finally {
    await close();
  }
}

/** Glass-to-glass, then each step of viewers, into `figures`. */
async function measure(
  live: LiveBench['live'],
  whepUrl: string,
  zero: number,
  figures: Record<string, number>,
  sinks?: Sinks,
): Promise<number> {
  try {
    const latencies = await glassToGlass(whepUrl, zero);
    figures.glassToGlassMedianMs = Math.round(median(latencies));
    figures.glassToGlassP95Ms = Math.round(quantile(latencies, 0.95));
    figures.samples = latencies.length;
  } catch (error) {
    console.warn(`Chromium skipped: ${error instanceof Error ? error.message : String(error)}`);
  }
  const server = { whepUrl, cpuMs: liveServerCpuMs, streamBytes: () => ingestBytes(live) };
  // The publisher's ingest (jitter buffer, WebM for the ladder) with no viewer: not forwarding.
  const idle = await idleOf(server);
  figures.serverCoresWithoutViewers = round2(idle.cores);
  figures.ingestMbpsWithoutViewers = round2((idle.streamBytesPerMs * 8) / 1000);
  for (const count of VIEWER_STEPS)
    record(figures, `viewers${count}`, await viewerStep({ ...server, idle }, count, sinks));
  return idle.streamBytesPerMs;
}

/**
 * The native floor (peers/native-sfu.mjs) sending a stream of the publisher's bitrate to each
 * step of viewers, after the live server has stopped: its figures, and ours against them.
 */
async function measureFloor(streamBytesPerMs: number, figures: Record<string, number>, sinks?: Sinks) {
  const port = portBase();
  const peer = spawn(process.execPath, [fileURLToPath(new URL('./peers/native-sfu.mjs', import.meta.url))], {
    env: { ...process.env, PORT: String(port), BITRATE: String(Math.round(streamBytesPerMs * 8000)) },
    stdio: 'inherit',
  });
  const base = `http://127.0.0.1:${port}`;
  const sent = async () => ((await (await fetch(base)).json()) as { sent: number }).sent;
  await waitUntil(async () => (await sent()) >= 0, 'the native floor');
  const floor = { whepUrl: `${base}/whep`, cpuMs: () => cpuMsOf(peer.pid!), streamBytes: sent };
  try {
    const idle = await idleOf(floor);
    for (const count of VIEWER_STEPS) {
      const step = await viewerStep({ ...floor, idle }, count, sinks);
      record(figures, `floorViewers${count}`, step);
      figures[`viewers${count}FloorRatio`] = round2(
        figures[`viewers${count}ServerCoreMsPerFullViewerSecond`]! / step.serverCoreMsPerFullViewerSecond,
      );
    }
  } finally {
    peer.kill('SIGTERM');
  }
}

await main();
// The server deps' job queue keeps polling its closed database: nothing else is left to end.
process.exit(0);
