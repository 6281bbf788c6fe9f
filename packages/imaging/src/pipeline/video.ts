// f=mp4: an animation to H.264 by an ffmpeg child process, from one of two inputs:
// - frames sharp rendered (any transform), on its stdin as raw RGB in a minimal Matroska
//   stream, the one container ffmpeg reads uncompressed video from with a timestamp per frame
//   (raw video alone has one frame rate; GIF and WebP delays vary, and ffmpeg 5 cannot read
//   animated WebP);
// - the GIF file itself (in a temporary file), when the transform is geometry alone
//   (animation.ts): ffmpeg's own GIF decoder and scaler do what sharp would do before it.
// The MP4 goes to a temporary file, since moving `moov` before `mdat` (faststart) needs a
// seekable output.
//
// Limits: one encoder thread (one transform, one core, as libvips runs it), the transform's
// deadline (ffmpeg is killed when it passes: 503), and a cap on the output's size (`-fs`).

import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
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

/** What ffmpeg reads: its input's arguments, and what goes to its stdin. */
interface VideoInput {
  /** `dir`: the conversion's temporary directory, removed afterwards. */
  open: (dir: string) => Promise<string[]>;
  feed: (stdin: Writable, exited: Promise<unknown>) => Promise<void>;
  /**
   * ffmpeg decodes the origin's own file: its failure is the file's (422), not the service's.
   * Raw frames of ours failing is a fault of ours.
   */
  decodesOrigin: boolean;
}

export function encodeMp4(frames: RenderedFrames, budget: Budget): Promise<Buffer> {
  const input: VideoInput = {
    open: () => Promise.resolve(['-f', 'matroska', '-i', 'pipe:0']),
    feed: (stdin, exited) => writeAll(stdin, matroska(frames), exited),
    decodesOrigin: false,
  };
  return encode(input, budget);
}

export function encodeGifMp4(video: GifVideo, budget: Budget): Promise<Buffer> {
  const { background: b } = video;
  const rgb = (b.r << 16) | (b.g << 8) | b.b;
  const input: VideoInput = {
    open: async (dir) => {
      // A file, not stdin: ffmpeg 5's GIF demuxer reads the whole file for its duration and
      // seeks back, which fails on a pipe once the GIF outgrows ffmpeg's read buffer.
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
    feed: (stdin, exited) => writeAll(stdin, [], exited),
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
    const args = await input.open(dir);
    await runFfmpeg(args, input, output, budget.millisecondsLeft());
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
  inputArgs: string[],
  { feed, decodesOrigin }: VideoInput,
  output: string,
  deadlineMs: number,
): Promise<void> {
  const child = spawn('ffmpeg', ffmpegArgs(inputArgs, output), { stdio: ['pipe', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => {
    if (stderr.length < 4096) stderr += chunk;
  });
  // ffmpeg exiting early breaks the pipe: its exit status says why, not the EPIPE.
  child.stdin.on('error', () => {});
  let timedOut = false;
  const timer =
    deadlineMs === Infinity
      ? undefined
      : setTimeout(() => {
          timedOut = true;
          child.kill('SIGKILL');
        }, deadlineMs);
  const exited = new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  try {
    await Promise.all([feed(child.stdin, exited), exited]);
    if (timedOut) throw new ImagingError('timeout', 'the conversion took too long');
    const code = await exited;
    if (code !== 0) {
      const failure = new Error(`ffmpeg exited with ${code}: ${stderr.trim()}`);
      if (!decodesOrigin) throw failure;
      throw new ImagingError('invalid-image', 'the GIF could not be decoded as a video', { cause: failure });
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      const reason = 'f=mp4 is not available on this server (no ffmpeg)';
      throw new ImagingError('video-unavailable', reason, { cause: error });
    }
    throw error;
  } finally {
    clearTimeout(timer);
    child.kill('SIGKILL');
  }
}

/**
 * Writes the chunks to ffmpeg's stdin as they come, honouring backpressure, and closes it;
 * stops early when ffmpeg has gone (`exited`).
 */
async function writeAll(
  stdin: Writable,
  chunks: Iterable<Buffer> | AsyncIterable<Buffer>,
  exited: Promise<unknown>,
): Promise<void> {
  const gone = exited.then(
    () => true,
    () => true,
  );
  for await (const chunk of chunks) {
    if (!stdin.writable) return;
    if (!stdin.write(chunk))
      await Promise.race([new Promise((resolve) => stdin.once('drain', resolve)), gone]);
  }
  stdin.end();
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
