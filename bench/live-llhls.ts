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
// Viewers: BENCH_VIEWERS (500,1000,2000) LL-HLS clients, 500 to a child process, as hls.js
// does it: a blocking reload for the next part (`_HLS_msn` / `_HLS_part`), then that part,
// each client with its own User-Agent (the per-client cap is 8 waiting requests) and its own
// keep-alive connection. The clients write their requests on raw sockets and read only the
// status and Content-Length of each answer (and the playlist's text, parsed once per version):
// Node's HTTP client cost several times what the server spends per answer, so the clients gave
// out first. A client keeps up when it received at least 90 % of the parts made while it watched;
// the live process's CPU (this process: HTTP serving from memory) and the clients' are measured
// over the same window. The clients share the machine's cores with the server, the encoder and
// the publisher: the count that keeps up is a floor for the server alone; the server's CPU per
// answered request (playlist or part) says what it alone would hold (a viewer asks about six a
// second: three parts, three reloads).
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createConnection, type Socket } from 'node:net';
import { createInterface } from 'node:readline';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as HLS from 'hls-parser';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../e2e/support/chromium.ts';
import { report, round2 } from './lib.ts';
import { BITS, childMode, frameTime, startLiveBench, startTimedPublisher } from './live-server.ts';

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
  // Generous: on a loaded machine the encoder runs late and parts come in bursts.
  const deadline = Date.now() + 60_000;
  while (ages.length < PARTS_AGED) {
    if (Date.now() > deadline)
      throw new Error(`only ${ages.length} parts aged in 60 s: is the publisher gone?`);
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

/** Clients per child process: each child is one JavaScript thread, so more children use both cores. */
const CLIENTS_PER_PROCESS = 500;

/**
 * `count` LL-HLS clients in child processes of CLIENTS_PER_PROCESS; resolves how many kept up,
 * this process's cores (the server) and the children's (the load generator).
 */
async function viewers(media: string, count: number) {
  const children = Array.from({ length: Math.ceil(count / CLIENTS_PER_PROCESS) }, (_, index) => {
    const first = index * CLIENTS_PER_PROCESS;
    return childMode(import.meta.url, '--viewers', {
      media,
      first,
      count: Math.min(CLIENTS_PER_PROCESS, count - first),
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
  const cpuBefore = process.cpuUsage();
  await new Promise((resolve) => setTimeout(resolve, WINDOW_MS));
  const cpu = process.cpuUsage(cpuBefore);
  const reports = await Promise.all(reporting);
  // The parts made while the window was open, by the numbers any client saw.
  const made =
    Math.max(...reports.map((report) => report.lastMade)) -
    Math.min(...reports.map((report) => report.firstMade ?? Infinity)) +
    1;
  const received = reports.flatMap((report) => report.received);
  const ratios = received.map((parts) => parts / made);
  const failures: Record<string, number> = {};
  for (const report of reports)
    for (const [status, times] of Object.entries(report.failures))
      failures[status] = (failures[status] ?? 0) + times;
  const requests = reports.reduce((sum, report) => sum + report.answers, 0);
  return {
    keptUp: ratios.filter((ratio) => ratio >= KEEPS_UP).length,
    medianShare: round2(median(ratios)),
    failures: Object.values(failures).reduce((sum, times) => sum + times, 0),
    failuresByStatus: failures,
    serverCores: round2((cpu.user + cpu.system) / 1e3 / WINDOW_MS),
    clientCores: round2(reports.reduce((sum, report) => sum + report.cpuMs, 0) / WINDOW_MS),
    requestsPerSecond: Math.round(requests / (WINDOW_MS / 1000)),
    serverMicrosecondsPerRequest: Math.round((cpu.user + cpu.system) / Math.max(1, requests)),
  };
}

async function main() {
  const { live, database, base, token, call } = await startLiveBench();
  const loadAtStart = loadavg()[0]!;
  let publisher: ReturnType<typeof startTimedPublisher> | undefined;
  try {
    const channelId = (
      await call('ImageFlux_20200316.CreateMultistreamChannelWithHLS', {
        hls: [{ durationSeconds: 1, video: { width: 1280, height: 720, fps: 30, bps: 2_500_000 } }],
      })
    ).channel_id as string;
    publisher = startTimedPublisher(`${base}/whip/${channelId}`, token);
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
      figures[`viewers${count}ClientCores`] = step.clientCores;
      figures[`viewers${count}RequestsPerSecond`] = step.requestsPerSecond;
      figures[`viewers${count}ServerMicrosecondsPerRequest`] = step.serverMicrosecondsPerRequest;
    }
    targets[`viewers${Math.max(...VIEWER_STEPS)}KeptUp`] = `>= 2000 (of ${Math.max(...VIEWER_STEPS)})`;
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
    // A failed step leaves no publisher (and its ffmpeg) running.
    await publisher?.stop();
    await live.close();
    await database.close();
  }
}

/** A child's clients: `count` of them from the `first`. */
interface ClientsTask {
  media: string;
  first: number;
  count: number;
}

/**
 * What a child's clients received over the window: new parts per client, the 200 answers
 * (playlists and parts), the numbers of the first and last part.
 */
interface ClientsReport {
  received: number[];
  answers: number;
  firstMade: number | undefined;
  lastMade: number;
  failures: Record<string, number>;
  /** The child's CPU over the window (ms). */
  cpuMs: number;
}

/**
 * One client's keep-alive HTTP/1.1 connection on a raw socket: a request at a time, as a
 * player's reload and part follow each other. It reads the status line and Content-Length only,
 * keeping the body when asked (playlists) and counting it otherwise (parts): Node's HTTP client
 * costs several times what the server spends on an answer, and would be what the bench measured.
 */
class Connection {
  private socket: Socket | undefined;
  /** Answers the current socket gave: a reused connection the server closed is retried. */
  private answered = 0;
  private head: Buffer = Buffer.alloc(0);
  private body: Buffer[] = [];
  private remaining = -1;
  private status = 0;
  private pending:
    | { request: string; keep: boolean; resolve: (answer: { status: number; body: Buffer }) => void }
    | undefined;

  constructor(
    private readonly port: number,
    private readonly userAgent: string,
  ) {}

  get(path: string, keep: boolean) {
    return new Promise<{ status: number; body: Buffer }>((resolve) => {
      const request = `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: ${this.userAgent}\r\n\r\n`;
      this.pending = { request, keep, resolve };
      this.send(request);
    });
  }

  close() {
    this.socket?.destroy();
  }

  private send(request: string) {
    this.socket ??= this.connect();
    this.socket.write(request);
  }

  private connect() {
    const socket = createConnection({ port: this.port, host: '127.0.0.1', noDelay: true });
    this.answered = 0;
    socket.on('data', (chunk: Buffer) => this.read(chunk));
    // A connection gone without its answer is a failure (status 0); the next request reconnects.
    socket.on('error', () => undefined);
    socket.on('close', () => {
      if (this.socket !== socket) return;
      this.socket = undefined;
      const untouched = this.remaining < 0 && this.head.length === 0;
      this.head = Buffer.alloc(0);
      this.remaining = -1;
      // As browsers do: a request on a kept-alive connection closed before any of its answer
      // came (the server's idle timeout racing it) is sent again on a new one.
      if (this.pending && untouched && this.answered > 0) this.send(this.pending.request);
      else this.finish(0);
    });
    return socket;
  }

  private read(chunk: Buffer) {
    if (this.remaining < 0) {
      const head = this.head.length ? Buffer.concat([this.head, chunk]) : chunk;
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) {
        this.head = head;
        return;
      }
      this.head = Buffer.alloc(0);
      const text = head.toString('latin1', 0, end);
      this.status = Number(text.slice(9, 12));
      // The live server gives every answer a Content-Length (no chunked encoding).
      this.remaining = Number(/\r\ncontent-length: *(\d+)/i.exec(text)?.[1] ?? 0);
      chunk = head.subarray(end + 4);
    }
    this.remaining -= chunk.length;
    if (this.pending?.keep && chunk.length) this.body.push(chunk);
    if (this.remaining <= 0) {
      this.remaining = -1;
      this.answered++;
      this.finish(this.status);
    }
  }

  private finish(status: number) {
    const pending = this.pending;
    this.pending = undefined;
    const body = this.body.length === 1 ? this.body[0]! : Buffer.concat(this.body);
    this.body = [];
    pending?.resolve({ status, body });
  }
}

/**
 * Child mode: prints `ready`, reads when the window opens (ms since the epoch) from stdin, then
 * clients `first` to `first + count - 1` reload with `_HLS_msn` / `_HLS_part` and fetch each
 * new part until WINDOW_MS after it; prints a ClientsReport.
 */
async function runViewers({ media, first, count }: ClientsTask) {
  process.stdout.write('ready\n');
  const opening = await createInterface({ input: process.stdin })[Symbol.asyncIterator]().next();
  const windowOpens = Number(opening.value);
  const url = new URL(media);
  const directory = url.pathname.replace(/[^/]*$/, '');
  const partNumber = (uri: string) => Number(/part(\d+)\.m4s$/.exec(uri)?.[1]);
  const windowCloses = windowOpens + WINDOW_MS;
  let cpuAtOpen: NodeJS.CpuUsage | undefined;
  setTimeout(() => (cpuAtOpen = process.cpuUsage()), windowOpens - Date.now());
  /** Failed answers by status (0: no answer). */
  const failures: Record<number, number> = {};
  const failed = (status: number) => {
    failures[status] = (failures[status] ?? 0) + 1;
    return new Promise((resolve) => setTimeout(resolve, 100));
  };
  // Every client gets the same few playlist versions: each is parsed once, into what a client
  // asks next (the newest listed part, and the blocking reload for the one after it).
  const parsed = new Map<string, { part: string; reload: string }>();
  const next = (text: string) => {
    let step = parsed.get(text);
    if (!step) {
      if (parsed.size > 16) parsed.clear();
      const playlist = HLS.parse(text) as HLS.types.MediaPlaylist;
      const open = playlist.segments.at(-1)!;
      const listed = open.parts.filter((part) => !part.hint);
      const newest = listed.at(-1) ?? playlist.segments.at(-2)!.parts.at(-1)!;
      step = {
        part: `${directory}${newest.uri}`,
        reload: `${url.pathname}?_HLS_msn=${open.mediaSequenceNumber}&_HLS_part=${listed.length}`,
      };
      parsed.set(text, step);
    }
    return step;
  };
  let firstMade: number | undefined;
  let lastMade = 0;
  /** Answers (200) in the window: playlists and parts. */
  let answers = 0;
  const received = Array.from({ length: count }, () => 0);
  const client = async (index: number) => {
    const connection = new Connection(Number(url.port), `llhls-bench/${first + index}`);
    let reload = url.pathname;
    /** The newest part counted: a playlist answered unchanged lists it again, which is no new part. */
    let newest = -1;
    while (Date.now() < windowCloses) {
      const answer = await connection.get(reload, true);
      if (answer.status !== 200) {
        await failed(answer.status);
        reload = url.pathname;
        continue;
      }
      const step = next(answer.body.toString('utf8'));
      const part = await connection.get(step.part, false);
      if (Date.now() >= windowOpens) answers += part.status === 200 ? 2 : 1;
      const number = partNumber(step.part);
      if (part.status === 200 && Date.now() >= windowOpens && number > newest) {
        newest = number;
        received[index]!++;
        firstMade ??= number;
        lastMade = Math.max(lastMade, number);
      } else if (part.status !== 200) await failed(part.status);
      reload = step.reload;
    }
    connection.close();
  };
  await Promise.all(received.map((_, index) => client(index)));
  const cpu = process.cpuUsage(cpuAtOpen);
  const report: ClientsReport = {
    received,
    answers,
    firstMade,
    lastMade,
    failures,
    cpuMs: (cpu.user + cpu.system) / 1e3,
  };
  process.stdout.write(`${JSON.stringify(report)}\n`);
  // stdin, still open, would keep the child running.
  process.exit(0);
}

if (process.argv[2] === '--viewers') {
  await runViewers(JSON.parse(process.argv[3]!) as ClientsTask);
} else {
  await main();
  // The server deps' job queue keeps a supervision timer after its database is closed.
  process.exit(0);
}
