// f=mp4: an animation to H.264 by an ffmpeg child process, from one of two inputs:
// - frames sharp rendered (any transform), as raw RGB in a minimal Matroska file, the one
//   container ffmpeg reads uncompressed video from with a timestamp per frame (raw video alone
//   has one frame rate; GIF and WebP delays vary, and ffmpeg 5 cannot read animated WebP);
// - the GIF file itself, when the transform is geometry alone (animation.ts): ffmpeg's own GIF
//   decoder and scaler do what sharp would do before it.
// Both reach ffmpeg as files in a temporary directory, and the MP4 comes back in one, since
// moving `moov` before `mdat` (faststart) needs a seekable output.
//
// ffmpeg is started by a shell this process keeps (the launcher below), not by this process:
// Node forks to spawn (libuv 1.46 on Linux), and a fork costs in proportion to the memory of
// the process forked. Forking the edge (130 MB and more) cost 20-30 ms of CPU per conversion
// in the edge and more in the child until its exec; forking dash costs well under 1 ms.
//
// Limits: one encoder thread (one transform, one core, as libvips runs it), the transform's
// deadline (ffmpeg is killed when it passes: 503), a cap on the output's size (`-fs`) and one
// on ffmpeg's address space (`ulimit -v`, set by the launcher's subshell).

import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Rgba } from '../grammar';
import type { Budget } from './budget';
import { ImagingError } from './errors';
import { orientedSize, sizeOf, visibleBox, type Box, type Plan } from './geometry';

export interface RenderedFrames {
  /** Every frame's RGB pixels, one after the other. */
  data: Buffer;
  width: number;
  height: number;
  /** Each frame's delay in ms. */
  delays: readonly number[];
}

/** The largest video sent; past it the conversion is refused (422). */
export const MAX_VIDEO_BYTES = 64 * 1024 ** 2;

/**
 * ffmpeg's address space. Mapping its ~215 libraries takes about 350 MiB; a 4000x3000 GIF to an
 * MP4 of that size peaks at 440 MiB resident. Past the limit an allocation fails and the
 * conversion is refused (422), so no input can take the machine's memory.
 */
const MAX_VIDEO_MEMORY_KIB = 1024 * 1024;
/** How ffmpeg (ENOMEM) and x264 (its own allocator) say an allocation failed. */
const OUT_OF_MEMORY = /Cannot allocate memory|malloc of size \d+ failed/;

/**
 * Browsers show GIF frames of 10 ms or less for 100 ms (such delays were written for old
 * browsers that ignored them); the video plays them as browsers do.
 */
const SHORTEST_DELAY_MS = 20;
const BROWSER_DELAY_MS = 100;

// An MP4 frame lasts until the next one; the last one as long as ffmpeg guesses, 1/r (1 ms
// with `-r 1000`). A copy of the last frame 1 ms before the end keeps the last delay, and the
// video lasts as long as the animation.
const CLOSING_FRAME_MS = 1;

/** A GIF for ffmpeg to decode and lay out by a plan of crops, a resize and padding alone. */
export interface GifVideo {
  gif: Buffer;
  /** No turn and no strategy (animation.ts decides). */
  plan: Plan;
  background: Rgba;
  /** Frames and delays as sharp read them, which the limits were checked against. */
  delays: readonly number[];
}

/** What ffmpeg reads: its input's arguments, once its file is written. */
interface VideoInput {
  /** `dir`: the conversion's temporary directory, removed afterwards. */
  open: (dir: string) => Promise<string[]>;
  /**
   * ffmpeg decodes the origin's own file: its failure is the file's (422), not the service's.
   * Raw frames of ours failing is a fault of ours.
   */
  decodesOrigin: boolean;
}

export function encodeMp4(frames: RenderedFrames, budget: Budget): Promise<Buffer> {
  const input: VideoInput = {
    open: async (dir) => {
      const file = join(dir, 'in.mkv');
      await writeFile(file, matroska(frames));
      return ['-f', 'matroska', '-i', file];
    },
    decodesOrigin: false,
  };
  return encode(input, budget);
}

export function encodeGifMp4(video: GifVideo, budget: Budget): Promise<Buffer> {
  const { background: b } = video;
  const rgb = (b.r << 16) | (b.g << 8) | b.b;
  const input: VideoInput = {
    open: async (dir) => {
      const file = join(dir, 'in.gif');
      await writeFile(file, video.gif);
      return [
        // The demuxer's rule for short delays in centiseconds, written out: the browsers' rule.
        ...['-f', 'gif', '-min_delay', String(SHORTEST_DELAY_MS / 10)],
        ...['-default_delay', String(BROWSER_DELAY_MS / 10)],
        // The decoder paints transparent pixels in this colour: opaque `b` flattens the frames
        // as sharp's flatten does, at no cost (GIF transparency is all or nothing).
        ...['-trans_color', String((0xff000000 | rgb) >>> 0), '-i', file],
        ...['-filter:v', gifFilters(video, rgb)],
      ];
    },
    decodesOrigin: true,
  };
  return encode(input, budget);
}

/**
 * The plan as ffmpeg filters, in applyPlan's order: input clip, lanczos resize (sharp's
 * lanczos3), the window's visible part, padding in `b`. Then the schedule's closing copy of
 * the last frame: tpad clones it, setpts moves it to its time (in ms, hence settb).
 */
function gifFilters({ plan, delays }: GifVideo, rgb: number): string {
  const { crop, source, scaled, window } = plan;
  const visible = visibleBox(plan);
  if (!visible) throw new ImagingError('empty-clip', 'the output clip holds only padding');
  const oriented = orientedSize(plan);
  const box = (b: Box) => `${b.width}:${b.height}:${b.left}:${b.top}`;
  const framing: string[] = [];
  if (visible.width !== oriented.width || visible.height !== oriented.height) {
    framing.push(`crop=${box(visible)}`);
  }
  if (visible.width !== window.width || visible.height !== window.height) {
    const at = { left: visible.left - window.left, top: visible.top - window.top };
    const colour = rgb.toString(16).padStart(6, '0');
    framing.push(`pad=${box({ ...sizeOf(window), ...at })}:color=0x${colour}`);
  }
  const filters: string[] = [];
  if (crop.width !== source.width || crop.height !== source.height) filters.push(`crop=${box(crop)}`);
  if (scaled.width !== crop.width || scaled.height !== crop.height) {
    filters.push(`scale=${scaled.width}:${scaled.height}:flags=lanczos`);
    // A crop or pad after the scale needs RGB frames: in yuv420p they would round odd offsets
    // and sides to even ones. Without them the scaler goes straight to yuv420p, which saves a
    // conversion per frame.
    if (framing.length > 0) filters.push('format=bgra');
  }
  filters.push(...framing);
  const closing = schedule(delays).at(-1)!;
  filters.push(
    // Only the frames the limits were checked against, however ffmpeg reads the file.
    `trim=end_frame=${delays.length}`,
    'tpad=stop_mode=clone:stop=1',
    'settb=1/1000',
    `setpts='if(eq(N,${delays.length}),${closing.time},PTS)'`,
  );
  return filters.join(',');
}

async function encode(input: VideoInput, budget: Budget): Promise<Buffer> {
  const dir = await mkdtemp(join(tmpdir(), 'ukiyo-mp4-'));
  const output = join(dir, 'out.mp4');
  try {
    const args = ffmpegArgs(await input.open(dir), output);
    await runFfmpeg(args, dir, input.decodesOrigin, budget.millisecondsLeft());
    const data = await readFile(output);
    // -fs stops writing once the file passes the limit, leaving it a little beyond.
    if (data.length >= MAX_VIDEO_BYTES) {
      throw new ImagingError(
        'too-large',
        `the video would be larger than ${MAX_VIDEO_BYTES / 1024 ** 2} MiB`,
      );
    }
    return data;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function ffmpegArgs(input: string[], output: string): string[] {
  return [
    ['-hide_banner', '-loglevel', 'error', ...input],
    ['-map', '0:v', '-an', '-c:v', 'libx264', '-preset', 'veryfast', '-crf', '23', '-threads', '1'],
    // No B-frames: with them x264 shifts decoding times, and players disagree on the duration
    // of a stream whose frames come at irregular times.
    ['-bf', '0', '-pix_fmt', 'yuv420p'],
    // Every frame at its own time (no frames dropped or repeated), in milliseconds.
    ['-fps_mode', 'passthrough', '-r', '1000'],
    ['-fs', String(MAX_VIDEO_BYTES), '-movflags', '+faststart', '-f', 'mp4', '-y', output],
  ].flat();
}

async function runFfmpeg(
  args: string[],
  dir: string,
  decodesOrigin: boolean,
  deadlineMs: number,
): Promise<void> {
  const errors = join(dir, 'stderr');
  let timedOut = false;
  let timer: NodeJS.Timeout | undefined;
  try {
    const job = launch(args, errors);
    if (deadlineMs !== Infinity) {
      timer = setTimeout(() => {
        timedOut = true;
        job.kill();
      }, deadlineMs);
    }
    const status = await job.exited;
    if (timedOut) throw new ImagingError('timeout', 'the conversion took too long');
    if (status === NOT_FOUND) throw unavailable();
    if (status !== 0) {
      const stderr = (await readFile(errors, 'utf8').catch(() => '')).slice(0, 4096);
      const failure = new Error(`ffmpeg exited with ${status}: ${stderr.trim()}`);
      if (OUT_OF_MEMORY.test(stderr)) {
        const reason = `the video would need more than ${MAX_VIDEO_MEMORY_KIB / 1024} MiB of memory`;
        throw new ImagingError('too-large', reason, { cause: failure });
      }
      if (!decodesOrigin) throw failure;
      throw new ImagingError('invalid-image', 'the GIF could not be decoded as a video', { cause: failure });
    }
  } catch (error) {
    // No shell to start ffmpeg with.
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw unavailable(error);
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

const unavailable = (cause?: unknown) =>
  new ImagingError('video-unavailable', 'f=mp4 is not available on this server (no ffmpeg)', { cause });

// --- Launcher --------------------------------------------------------------------------------

// One line on its stdin per job: a subshell that starts ffmpeg, says its pid, waits for it and
// says its exit status (`<job> <pid>`, then `<job> = <status>`). The subshell reaps ffmpeg and
// the shell the subshell, so that ffmpeg's CPU stays counted in this process's tree.
const LAUNCHER = 'while IFS= read -r job; do eval "$job"; done';

/** The shell's status for a command it did not find. */
const NOT_FOUND = 127;

interface Job {
  exited: Promise<number>;
  kill: () => void;
}

interface Pending {
  pid?: number;
  killed: boolean;
  resolve: (status: number) => void;
  reject: (error: Error) => void;
}

interface Launcher {
  /** Its stdin and stdout are sockets (pipes), which can be unreferenced. */
  shell: ChildProcessByStdio<Socket, Socket, null>;
  pending: Map<number, Pending>;
}

let launcher: Launcher | null = null;
let jobs = 0;

/** Single quotes for the shell: all in them is literal; a `'` closes them, is escaped, reopens. */
const quote = (arg: string) => `'${arg.replaceAll("'", "'\\''")}'`;

/** Starts ffmpeg with `args` through the launcher, its stderr into the file `errors`. */
function launch(args: string[], errors: string): Job {
  // A job is one line.
  if ([...args, errors].some((arg) => arg.includes('\n')))
    throw new Error('an ffmpeg argument holds a newline');
  const { shell, pending } = launcher ?? startLauncher();
  const id = jobs++;
  const exited = new Promise<number>((resolve, reject) => {
    pending.set(id, { killed: false, resolve, reject });
  });
  // The PATH of the moment, in which spawn would look ffmpeg up.
  const command = [`PATH=${quote(process.env.PATH ?? '')}`, 'ffmpeg', ...args.map(quote)].join(' ');
  const redirects = `</dev/null >/dev/null 2>${quote(errors)}`;
  const limited = `ulimit -v ${MAX_VIDEO_MEMORY_KIB}; ${command} ${redirects}`;
  shell.stdin.write(`(${limited} & echo "${id} $!"; wait $!; echo "${id} = $?") &\n`);
  shell.stdout.ref();
  return {
    exited,
    kill: () => {
      const job = pending.get(id);
      if (!job) return;
      job.killed = true;
      if (job.pid) killFfmpeg(job.pid);
    },
  };
}

/** ffmpeg may have exited (and the line saying so not arrived yet): nothing to kill then. */
function killFfmpeg(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // ESRCH
  }
}

function startLauncher(): Launcher {
  const shell = spawn('/bin/sh', ['-c', LAUNCHER], {
    stdio: ['pipe', 'pipe', 'inherit'],
  }) as Launcher['shell'];
  const pending = new Map<number, Pending>();
  const started: Launcher = { shell, pending };
  launcher = started;
  // Idle, the shell keeps no process running; a job waiting for ffmpeg does (launch refs stdout).
  shell.unref();
  shell.stdin.unref();
  shell.stdout.unref();
  // A shell gone breaks the pipe: its exit tells the jobs.
  shell.stdin.on('error', () => {});
  let partial = '';
  shell.stdout.setEncoding('utf8');
  shell.stdout.on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop()!;
    for (const line of lines) {
      const [id, pidOrEquals, status] = line.split(' ');
      const job = pending.get(Number(id));
      if (!job) continue;
      if (pidOrEquals === '=') {
        pending.delete(Number(id));
        job.resolve(Number(status));
      } else {
        job.pid = Number(pidOrEquals);
        if (job.killed) killFfmpeg(job.pid);
      }
    }
    if (pending.size === 0) shell.stdout.unref();
  });
  const fail = (error: Error) => {
    if (launcher === started) launcher = null;
    // Nothing would wait for them, nor kill them at their deadline.
    for (const job of pending.values()) {
      if (job.pid) killFfmpeg(job.pid);
      job.reject(error);
    }
    pending.clear();
  };
  shell.once('error', fail);
  shell.once('exit', (code, signal) => fail(new Error(`the ffmpeg launcher exited (${signal ?? code})`)));
  return started;
}

// --- Matroska ------------------------------------------------------------------------------

/** An EBML element's ID and its data's size, as an 8-byte variable-length integer. */
function head(id: number, size: number): Buffer {
  const length = Buffer.alloc(8);
  length.writeBigUInt64BE(BigInt(size) | (1n << 56n));
  return Buffer.concat([uint(id), length]);
}

function element(id: number, ...data: Buffer[]): Buffer {
  const size = data.reduce((sum, part) => sum + part.length, 0);
  return Buffer.concat([head(id, size), ...data]);
}

/** Big-endian, in as few bytes as it takes. */
function uint(value: number): Buffer {
  const bytes = Buffer.alloc(8);
  bytes.writeBigUInt64BE(BigInt(value));
  const first = bytes.findIndex((byte) => byte !== 0);
  return bytes.subarray(first < 0 ? 7 : first);
}

const ascii = (text: string) => Buffer.from(text, 'latin1');

const EBML_HEADER = element(
  0x1a45dfa3,
  element(0x4282, ascii('matroska')), // DocType
  element(0x4287, uint(4)), // DocTypeVersion
  element(0x4285, uint(2)), // DocTypeReadVersion
);
// A Segment of unknown size (all ones): the stream ends where stdin does.
const SEGMENT = Buffer.concat([
  uint(0x18538067),
  Buffer.from([0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]),
]);
const INFO = element(0x1549a966, element(0x2ad7b1, uint(1_000_000))); // TimestampScale: 1 ms

function tracks(width: number, height: number): Buffer {
  const video = element(
    0xe0,
    element(0xb0, uint(width)), // PixelWidth
    element(0xba, uint(height)), // PixelHeight
    element(0x2eb524, Buffer.from([0x52, 0x47, 0x42, 24])), // ColourSpace: ffmpeg's tag for rgb24
  );
  const entry = element(
    0xae,
    element(0xd7, uint(1)), // TrackNumber
    element(0x73c5, uint(1)), // TrackUID
    element(0x83, uint(1)), // TrackType: video
    element(0x86, ascii('V_UNCOMPRESSED')),
    video,
  );
  return element(0x1654ae6b, entry);
}

/** When each frame is shown, in ms, closed by a copy of the last frame (CLOSING_FRAME_MS). */
function schedule(delays: readonly number[]): Array<{ frame: number; time: number }> {
  const shown: Array<{ frame: number; time: number }> = [];
  let time = 0;
  for (const [frame, delay] of delays.entries()) {
    shown.push({ frame, time });
    time += delay < SHORTEST_DELAY_MS ? BROWSER_DELAY_MS : delay;
  }
  shown.push({ frame: delays.length - 1, time: time - CLOSING_FRAME_MS });
  return shown;
}

/** The frames as Matroska, one cluster per frame, made as ffmpeg reads them. */
function* matroska(frames: RenderedFrames): Generator<Buffer> {
  yield Buffer.concat([EBML_HEADER, SEGMENT, INFO, tracks(frames.width, frames.height)]);
  const frameBytes = frames.width * frames.height * 3;
  for (const { frame, time } of schedule(frames.delays)) {
    const pixels = frames.data.subarray(frame * frameBytes, (frame + 1) * frameBytes);
    // SimpleBlock: track 1 (0x81), 0 ms after its cluster's timestamp, a keyframe (0x80).
    const block = Buffer.from([0x81, 0, 0, 0x80]);
    const timestamp = element(0xe7, uint(time));
    const blockHead = head(0xa3, block.length + pixels.length);
    const cluster = head(0x1f43b675, timestamp.length + blockHead.length + block.length + pixels.length);
    yield Buffer.concat([cluster, timestamp, blockHead, block]);
    yield pixels;
  }
}

/** H.264 in yuv420p needs even sides: an odd side gains a row or column of padding (`b`). */
export function evenSides(plan: Plan): Plan {
  const { window } = plan;
  return {
    ...plan,
    window: {
      ...window,
      width: window.width + (window.width % 2),
      height: window.height + (window.height % 2),
    },
  };
}
