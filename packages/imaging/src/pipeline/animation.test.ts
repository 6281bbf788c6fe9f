import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePath, type ParsedParams } from '../grammar';
import { ffmpegDraws } from './animation';
import { Budget } from './budget';
import { planGeometry } from './geometry';
import {
  canvas,
  convert as convertPath,
  failure,
  noise,
  noLimits,
  stackedFrames,
  type Rgb,
} from './test-fixtures';
import type { TransformRequest } from './transform';
import { encodeMp4, evenSides } from './video';

const COLOURS: Rgb[] = [
  [255, 0, 0],
  [0, 255, 0],
  [0, 0, 255],
  [255, 255, 0],
];
const DELAYS = [100, 300, 50, 550];
const LOOP = 3;
const WIDTH = 60;
const HEIGHT = 40;
/** Marks each frame's top left, so that crops, turns and mirrors show where they put it. */
const CORNER = { width: 12, height: 8 };

let gif: Buffer; // 60x40, 4 frames of one colour each with a black 12x8 block top-left
let webp: Buffer; // the same as an animated WebP
let clearGif: Buffer; // the GIF with its corner block transparent instead of black
let clearWebp: Buffer; // the same as a WebP
let still: Buffer; // a 60x40 JPEG
let dot: Buffer; // 8x8 opaque black PNG, for overlays
let scratch: string; // videos written for ffprobe and ffmpeg to read

const frames = () => stackedFrames(COLOURS, WIDTH, HEIGHT, CORNER);

beforeAll(async () => {
  gif = await frames().gif({ delay: DELAYS, loop: LOOP }).toBuffer();
  webp = await frames().webp({ delay: DELAYS, loop: LOOP, lossless: true }).toBuffer();
  const { data, info } = await frames().ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  // Only the corner blocks are black.
  for (let i = 0; i < data.length; i += 4) if (!data[i] && !data[i + 1] && !data[i + 2]) data[i + 3] = 0;
  const clear = () => sharp(data, { raw: { ...info, pageHeight: HEIGHT } });
  clearGif = await clear().gif({ delay: DELAYS, loop: LOOP }).toBuffer();
  clearWebp = await clear().webp({ delay: DELAYS, loop: LOOP, lossless: true }).toBuffer();
  still = await canvas(WIDTH, HEIGHT, '#808080').jpeg().toBuffer();
  dot = await canvas(8, 8, '#000000').png().toBuffer();
});

const convert = (path: string, source: Buffer, options: Partial<TransformRequest> = {}) =>
  convertPath(path, source, { overlays: { '/dot.png': dot }, ...options });

/** An animation decoded by sharp: its timing and each frame's pixels. */
async function decoded(data: Buffer) {
  const meta = await sharp(data, { animated: true }).metadata();
  const { data: raw, info } = await sharp(data, { animated: true })
    .ensureAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  const pageHeight = meta.pageHeight ?? meta.height;
  return {
    format: meta.format,
    pages: meta.pages ?? 1,
    delay: meta.delay,
    loop: meta.loop,
    width: info.width,
    pageHeight,
    at: (frame: number, x: number, y: number) => {
      const i = ((frame * pageHeight + y) * info.width + x) * 4;
      return [...raw.subarray(i, i + 3)];
    },
  };
}

/** Equal but for resampling's ringing at edges and the palette GIF shares between frames. */
function close(actual: number[], expected: number[], tolerance = 16): boolean {
  return actual.every((value, i) => Math.abs(value - (expected[i] ?? 0)) <= tolerance);
}

describe('animated GIF and WebP', () => {
  it('keeps every frame, its delay and the loop count through a resize', async () => {
    const result = await convert('/w=30/a.gif', gif);
    expect(result).toMatchObject({ format: 'gif', contentType: 'image/gif', width: 30, height: 20 });
    const out = await decoded(result.data);
    expect(out).toMatchObject({
      format: 'gif',
      pages: 4,
      delay: DELAYS,
      loop: LOOP,
      width: 30,
      pageHeight: 20,
    });
    COLOURS.forEach((colour, frame) => {
      expect(close(out.at(frame, 20, 15), colour)).toBe(true);
      expect(close(out.at(frame, 2, 1), [0, 0, 0])).toBe(true);
    });
  });

  it('writes an animated WebP, from GIF or WebP, and negotiates webp:gif', async () => {
    for (const source of [gif, webp]) {
      const result = await convert('/w=30,f=webp/a.gif', source);
      expect(result).toMatchObject({ format: 'webp', width: 30, height: 20 });
      const out = await decoded(result.data);
      expect(out).toMatchObject({ format: 'webp', pages: 4, delay: DELAYS, loop: LOOP });
      COLOURS.forEach((colour, frame) => expect(close(out.at(frame, 20, 15), colour)).toBe(true));
    }
    const accepted = await convert('/f=webp:gif/a.gif', gif, { accept: 'image/webp' });
    const refused = await convert('/f=webp:gif/a.gif', gif, { accept: 'image/png' });
    expect(accepted).toMatchObject({ format: 'webp', varyAccept: true });
    expect(refused).toMatchObject({ format: 'gif', varyAccept: true });
    expect((await decoded(accepted.data)).pages).toBe(4);
    expect((await decoded(refused.data)).pages).toBe(4);
  });

  it('sends the first frame to formats that cannot animate', async () => {
    for (const f of ['jpg', 'png', 'avif']) {
      const result = await convert(`/w=30,f=${f}/a.gif`, gif);
      const out = await decoded(result.data);
      expect(out.pages).toBe(1);
      expect(close(out.at(0, 20, 15), COLOURS[0]!, 12)).toBe(true);
    }
  });

  it('takes the pages of other formats for no animation', async () => {
    const pages = await frames().tiff().toBuffer();
    expect((await sharp(pages).metadata()).pages).toBe(4);
    expect((await decoded((await convert('/f=gif/a.tif', pages)).data)).pages).toBe(1);
    expect(await failure(convert('/f=mp4/a.tif', pages))).toMatchObject({ code: 'not-animated' });
  });

  it('runs crops, padding and mirroring on every frame', async () => {
    // Input clip of the top-left 30x20, padded into 40x40 with blue (a=3), mirrored (ir=2).
    const result = await convert('/ic=0:0:30:20,w=40,h=40,a=3,b=0000ff,ir=2/a.gif', gif);
    const out = await decoded(result.data);
    expect(out).toMatchObject({ pages: 4, width: 40, pageHeight: 40, delay: DELAYS });
    COLOURS.forEach((colour, frame) => {
      expect(out.at(frame, 20, 3)).toEqual([0, 0, 255]); // padding above the 40x27 image
      // The corner block, mirrored to the right and scaled to 16x11 below the padding.
      expect(close(out.at(frame, 36, 10), [0, 0, 0])).toBe(true);
      expect(close(out.at(frame, 10, 20), colour)).toBe(true);
    });
    const clipped = await decoded((await convert('/w=30,oc=10:5:20:15/a.gif', gif)).data);
    expect(clipped).toMatchObject({ pages: 4, width: 10, pageHeight: 10 });
    COLOURS.forEach((colour, frame) => expect(close(clipped.at(frame, 5, 5), colour)).toBe(true));
  });

  it('turns every frame by a quarter, in order', async () => {
    // EXIF orientation 6 is undone by a clockwise quarter turn: the corner block goes top-right.
    const result = await convert('/ir=6,w=20/a.gif', gif);
    const out = await decoded(result.data);
    expect(out).toMatchObject({ pages: 4, width: 20, pageHeight: 30, delay: DELAYS, loop: LOOP });
    COLOURS.forEach((colour, frame) => {
      expect(close(out.at(frame, 18, 2), [0, 0, 0])).toBe(true);
      expect(close(out.at(frame, 0, 0), colour)).toBe(true);
      expect(close(out.at(frame, 10, 20), colour)).toBe(true);
    });
  });

  it('blurs each frame apart from its neighbours', async () => {
    const out = await decoded((await convert('/blur=5x3/a.gif', gif)).data);
    expect(out.pages).toBe(4);
    // Across the tall image, the bottom row of a frame would take the next frame's colour.
    COLOURS.forEach((colour, frame) => expect(close(out.at(frame, 30, HEIGHT - 1), colour)).toBe(true));
  });

  it('composites image and text overlays onto every frame', async () => {
    const result = await convert('/w=30,l=(lg=9,x=0,y=0%2Fdot.png),t=(lg=1,b=ffffffff,text=A)/a.gif', gif);
    const out = await decoded(result.data);
    expect(out).toMatchObject({ pages: 4, delay: DELAYS, loop: LOOP });
    COLOURS.forEach((colour, frame) => {
      expect(out.at(frame, 28, 18)).toEqual([0, 0, 0]); // the dot, bottom-right
      expect(out.at(frame, 1, 1)).toEqual([255, 255, 255]); // the text box's background
      expect(close(out.at(frame, 15, 10), colour)).toBe(true);
    });
  });

  it('refuses more frames than allowed, and counts every frame against the pixel limit', async () => {
    const tooMany = await failure(convert('/w=30/a.gif', gif, { limits: { ...noLimits, maxFrames: 3 } }));
    expect(tooMany).toMatchObject({ status: 422, code: 'too-large' });
    expect(tooMany.message).toBe('the animation has 4 frames, more than the 3 allowed');
    // Two frames' pixels: the first frame alone would pass.
    const pixelLimit = { ...noLimits, maxInputPixels: WIDTH * HEIGHT * 2 };
    const tooLarge = await failure(convert('/w=30/a.gif', gif, { limits: pixelLimit }));
    expect(tooLarge).toMatchObject({ status: 422, code: 'too-large' });
    // A still of the first frame needs neither.
    expect(
      await convert('/w=30,f=png/a.gif', gif, { limits: { ...pixelLimit, maxFrames: 3 } }),
    ).toMatchObject({
      format: 'png',
    });
  });

  it('charges every frame against the budget', async () => {
    // Large enough for the units to count: 600x400 GIF frames cost ~200 units each.
    const animated = await convert('/w=600/a.gif', gif);
    const first = await convert('/w=600/a.gif', await sharp(gif).gif().toBuffer());
    expect(first.cost).toBeGreaterThan(100);
    expect(animated.cost).toBeGreaterThanOrEqual(4 * first.cost - 4);
    const budget = { ...noLimits, maxCost: 2 * first.cost };
    expect(await failure(convert('/w=600/a.gif', gif, { limits: budget }))).toMatchObject({
      code: 'too-costly',
    });
  });

  it('passes animations through unchanged with through=gif', async () => {
    const result = await convert('/w=30,through=gif/a.gif', gif);
    expect(result).toMatchObject({ passedThrough: true, contentType: 'image/gif' });
    expect(result.data.equals(gif)).toBe(true);
  });
});

// --- f=mp4 ------------------------------------------------------------------------------------

interface Probe {
  streams: Array<{
    codec_name: string;
    pix_fmt: string;
    width: number;
    height: number;
    nb_read_frames: string;
    codec_type: string;
  }>;
  format: { duration: string };
}

let videos = 0;

/** ffprobe's view of a video, when each frame starts, and each frame's pixels decoded by ffmpeg. */
function probe(data: Buffer) {
  const file = join(scratch, `${videos++}.mp4`);
  writeFileSync(file, data);
  const ffprobe = (...args: string[]) =>
    execFileSync('ffprobe', ['-v', 'error', ...args, '-of', 'json', file]);
  const video = JSON.parse(ffprobe('-count_frames', '-show_streams', '-show_format').toString()) as Probe;
  const { packets } = JSON.parse(ffprobe('-show_entries', 'packet=pts_time').toString()) as {
    packets: Array<{ pts_time: string }>;
  };
  const { width = 0, height = 0 } = video.streams[0] ?? {};
  // Every frame once, at its own time (ffmpeg would otherwise repeat them at a frame rate).
  const rgb = execFileSync('ffmpeg', [
    ...['-v', 'error', '-i', file, '-fps_mode', 'passthrough', '-f', 'rawvideo', '-pix_fmt', 'rgb24', '-'],
  ]);
  const pixel = (frame: number, x: number, y: number) => {
    const i = ((frame * height + y) * width + x) * 3;
    return [...rgb.subarray(i, i + 3)];
  };
  return { video, starts: packets.map((packet) => Number(packet.pts_time)), pixel };
}

/** Top-level MP4 boxes in file order. */
function boxes(data: Buffer): string[] {
  const names: string[] = [];
  for (let at = 0; at + 8 <= data.length;) {
    const size = data.readUInt32BE(at);
    names.push(data.toString('latin1', at + 4, at + 8));
    if (size < 8) break;
    at += size;
  }
  return names;
}

// Each conversion starts ffmpeg and each probe ffprobe and ffmpeg: ~0.2 s of CPU apiece on a
// loaded machine.
describe('f=mp4', { timeout: 20_000 }, () => {
  beforeAll(() => {
    scratch = mkdtempSync(join(tmpdir(), 'ukiyo-mp4-test-'));
  });
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('encodes an animation as H.264 with its frames at their delays', async () => {
    for (const source of [gif, webp]) {
      const result = await convert('/w=31,f=mp4/a.gif', source);
      // 31x21 is odd both ways: a column and a row of background pad it to 32x22.
      expect(result).toMatchObject({ format: 'mp4', contentType: 'video/mp4', width: 32, height: 22 });
      const { video, starts, pixel } = probe(result.data);
      expect(video.streams.map((s) => s.codec_type)).toEqual(['video']);
      const [stream] = video.streams;
      expect(stream).toMatchObject({ codec_name: 'h264', pix_fmt: 'yuv420p', width: 32, height: 22 });
      // The four frames and the 1 ms copy of the last that closes its delay.
      expect(stream?.nb_read_frames).toBe('5');
      const total = DELAYS.reduce((sum, delay) => sum + delay, 0) / 1000;
      expect(Math.abs(Number(video.format.duration) - total)).toBeLessThan(0.005);
      // Each frame where the delays before it put it, in its own colour; the closing copy last.
      expect(starts).toEqual([0, 0.1, 0.4, 0.45, 0.999]);
      [...COLOURS, COLOURS[3]!].forEach((colour, frame) =>
        expect(close(pixel(frame, 20, 15), colour, 24)).toBe(true),
      );
      // The padding is b's white, though yuv420p shares its colour with the red next to it.
      expect(Math.min(...pixel(0, 31, 10))).toBeGreaterThan(128);
      const order = boxes(result.data);
      expect(order.indexOf('moov')).toBeGreaterThanOrEqual(0);
      expect(order.indexOf('moov')).toBeLessThan(order.indexOf('mdat'));
    }
  });

  it('applies overlays and rotations before encoding', async () => {
    const result = await convert('/ir=6,w=20,l=(lg=7,x=0,y=0%2Fdot.png),f=mp4/a.gif', gif);
    expect(result).toMatchObject({ width: 20, height: 30 });
    const { pixel } = probe(result.data);
    COLOURS.forEach((colour, frame) => {
      expect(close(pixel(frame, 2, 27), [0, 0, 0], 24)).toBe(true); // the dot, bottom-left
      expect(close(pixel(frame, 17, 2), [0, 0, 0], 24)).toBe(true); // the corner block, turned
      expect(close(pixel(frame, 10, 15), colour, 24)).toBe(true);
    });
  });

  // A GIF whose transform is geometry alone goes to ffmpeg as it is; WebP, which ffmpeg 5
  // cannot read, always takes the sharp path: the same frames as WebP show what sharp draws.
  const fastPath = (path: string, input: 'gif' | 'webp' = 'gif') => {
    const parsed = parsePath(path);
    if (!parsed.ok) throw new Error(parsed.reason);
    const params: ParsedParams = parsed.params;
    const env = { orientation: 1 as const, maxSide: 8192, maxPixels: 40_000_000 };
    const plan = evenSides(planGeometry({ width: WIDTH, height: HEIGHT }, params, env));
    const background = params.b ?? { r: 255, g: 255, b: 255, alpha: 255 };
    const layered = Boolean(params.l ?? params.t);
    const output = { format: 'mp4' as const, params, background, layered, orientation: 1 as const };
    return ffmpegDraws(input, { ...plan, strategy: undefined }, output);
  };

  it('takes the GIF to ffmpeg only for geometry it expresses', () => {
    const geometry = [
      '/w=31,f=mp4/a.gif',
      '/w=40,h=40,a=3,b=0000ff,f=mp4/a.gif',
      '/ic=0:0:30:20,w=50,oc=5:5:45:31,f=mp4/a.gif',
      '/w=20,h=40,a=2,g=attention,f=mp4/a.gif', // animations keep the centre
      '/brightness=100,grayscale=0,f=mp4/a.gif', // filters that change nothing
    ];
    for (const path of geometry) expect(fastPath(path)).toBe(true);
    expect(fastPath('/w=31,f=mp4/a.gif', 'webp')).toBe(false);
    const drawn = [
      '/ir=2,f=mp4/a.gif',
      '/or=6,f=mp4/a.gif',
      '/blur=5x3,f=mp4/a.gif',
      '/unsharp=2x1,f=mp4/a.gif',
      '/grayscale=50,f=mp4/a.gif',
      '/sepia=100,f=mp4/a.gif',
      '/brightness=120,f=mp4/a.gif',
      '/contrast=80,f=mp4/a.gif',
      '/invert=1,f=mp4/a.gif',
      '/l=(%2Fdot.png),f=mp4/a.gif',
      '/t=(text=A),f=mp4/a.gif',
    ];
    for (const path of drawn) expect({ path, fast: fastPath(path) }).toEqual({ path, fast: false });
  });

  it('makes the same video from a GIF by ffmpeg alone as by sharp', async () => {
    const cases = [
      { path: '/w=31,f=mp4/a.gif', gif, webp },
      // Transparent pixels on b, as sharp flattens them.
      { path: '/w=30,b=00ff00,f=mp4/a.gif', gif: clearGif, webp: clearWebp },
      { path: '/w=30,b=00ff0080,f=mp4/a.gif', gif: clearGif, webp: clearWebp }, // b's alpha: none
      // Padded both ways (a=3), at odd offsets.
      { path: '/w=40,h=40,a=3,b=0000ff,f=mp4/a.gif', gif: clearGif, webp: clearWebp },
      // Input clip, enlarged, then an output clip reaching past the image: padding.
      { path: '/ic=0:0:30:20,w=50,oc=5:5:45:37,f=mp4/a.gif', gif, webp },
      { path: '/w=20,h=40,a=2,g=entropy,f=mp4/a.gif', gif, webp },
    ];
    for (const { path, gif: fromGif, webp: fromWebp } of cases) {
      expect(fastPath(path)).toBe(true);
      const [fast, drawn] = await Promise.all([convert(path, fromGif), convert(path, fromWebp)]);
      expect({ path, width: fast.width, height: fast.height }).toEqual({
        path,
        width: drawn.width,
        height: drawn.height,
      });
      const [a, b] = [probe(fast.data), probe(drawn.data)];
      const [streamA, streamB] = [a.video.streams[0]!, b.video.streams[0]!];
      expect(streamA).toMatchObject({
        width: streamB.width,
        height: streamB.height,
        nb_read_frames: streamB.nb_read_frames,
        pix_fmt: 'yuv420p',
      });
      expect(a.starts).toEqual(b.starts);
      expect(a.video.format.duration).toBe(b.video.format.duration);
      // Every pixel of every frame, but for resampling's ringing and chroma at edges.
      const frames = Number(streamB.nb_read_frames);
      let worst = 0;
      for (let frame = 0; frame < frames; frame++) {
        let sum = 0;
        for (let y = 0; y < streamB.height; y++) {
          for (let x = 0; x < streamB.width; x++) {
            const [p, q] = [a.pixel(frame, x, y), b.pixel(frame, x, y)];
            sum += p.reduce((total, v, i) => total + Math.abs(v - (q[i] ?? 0)), 0) / 3;
          }
        }
        worst = Math.max(worst, sum / (streamB.width * streamB.height));
      }
      expect(worst, path).toBeLessThan(3);
    }
  }, 60_000);

  it('places frames and padding from the GIF where sharp does', async () => {
    // 40x27 in a 40x40 box: 6 rows of blue above, 7 below; the corner on b as well.
    const padded = probe((await convert('/w=40,h=40,a=3,b=0000ff,f=mp4/a.gif', clearGif)).data);
    COLOURS.forEach((colour, frame) => {
      expect(close(padded.pixel(frame, 20, 2), [0, 0, 255], 24)).toBe(true);
      expect(close(padded.pixel(frame, 20, 37), [0, 0, 255], 24)).toBe(true);
      expect(close(padded.pixel(frame, 3, 9), [0, 0, 255], 24)).toBe(true); // the clear corner
      expect(close(padded.pixel(frame, 25, 20), colour, 24)).toBe(true);
    });
    // Short delays play as browsers play them (0 and 10 ms: 100 ms).
    const short = await frames()
      .gif({ delay: [0, 300, 10, 550] })
      .toBuffer();
    const timed = probe((await convert('/f=mp4/a.gif', short)).data);
    expect(timed.starts).toEqual([0, 0.1, 0.4, 0.5, 1.049]);
    expect(Number(timed.video.format.duration)).toBeCloseTo(1.05, 3);
  });

  it('reads GIFs larger than what ffmpeg buffers', async () => {
    // ffmpeg 5's GIF demuxer reads the whole file first and seeks back: 5 frames of noise.
    const pages = await Promise.all(
      [10, 20, 30, 40, 50].map((sigma) => noise(200, 150, sigma).png().toBuffer()),
    );
    const large = await sharp(pages, { join: { animated: true } })
      .gif({ delay: [40, 60, 80, 40, 60] })
      .toBuffer();
    expect(large.length).toBeGreaterThan(100_000);
    const { video, starts } = probe((await convert('/w=101,f=mp4/a.gif', large)).data);
    expect(video.streams[0]).toMatchObject({ width: 102, height: 76, nb_read_frames: '6' });
    expect(starts).toEqual([0, 0.04, 0.1, 0.18, 0.22, 0.279]);
  });

  it('keeps the frame limit on the GIF that ffmpeg decodes', async () => {
    const limits = { ...noLimits, maxFrames: 3 };
    expect(await failure(convert('/w=30,f=mp4/a.gif', gif, { limits }))).toMatchObject({ code: 'too-large' });
  });

  it('refuses a still image with a 400', async () => {
    const error = await failure(convert('/f=mp4/a.jpg', still));
    expect(error).toMatchObject({ status: 400, code: 'not-animated' });
    expect(error.message).toMatch(/animated GIF and WebP/);
  });

  it('kills ffmpeg at the deadline with a 503 and leaves no temporary files', async () => {
    // A temporary directory of this test's own: other test files convert to MP4 at the same time.
    const own = mkdtempSync(join(tmpdir(), 'ukiyo-deadline-'));
    const { TMPDIR } = process.env;
    process.env.TMPDIR = own;
    try {
      // 1 ms left on a clock that stands still: ffmpeg cannot even start in that time.
      const budget = new Budget({ maxCost: 0, timeoutMs: 1 }, () => 0);
      const frames = { data: Buffer.alloc(64 * 64 * 3 * 2), width: 64, height: 64, delays: [100, 100] };
      expect(await failure(encodeMp4(frames, budget))).toMatchObject({ status: 503, code: 'timeout' });
      expect(readdirSync(own)).toEqual([]);
    } finally {
      if (TMPDIR === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = TMPDIR;
      rmSync(own, { recursive: true, force: true });
    }
  });

  it('runs conversions side by side through one shell, and starts another when it is gone', async () => {
    const launchers = () =>
      readFileSync(`/proc/${process.pid}/task/${process.pid}/children`, 'utf8')
        .trim()
        .split(' ')
        .filter((pid) => pid && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('read -r job'));
    const widths = [20, 30, 40];
    // Each its own video, whole (`moov` written last by faststart's second pass).
    const videos = async () =>
      (await Promise.all(widths.map((w) => convert(`/w=${w},f=mp4/a.gif`, gif)))).map((result) => [
        result.width,
        result.height,
        boxes(result.data).includes('moov'),
      ]);
    // Odd heights gain a row.
    const expected = [
      [20, 14, true],
      [30, 20, true],
      [40, 28, true],
    ];
    expect(await videos()).toEqual(expected);
    const [shell, ...others] = launchers();
    expect(others).toEqual([]);
    process.kill(Number(shell), 'SIGKILL');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await videos()).toEqual(expected);
    expect(launchers()).toHaveLength(1);
    expect(launchers()).not.toContain(shell);
  });

  it('answers 503 when ffmpeg is missing', async () => {
    const path = process.env.PATH;
    process.env.PATH = join(tmpdir(), 'no-such-directory');
    try {
      const error = await failure(convert('/f=mp4/a.gif', gif));
      expect(error).toMatchObject({ status: 503, code: 'video-unavailable' });
    } finally {
      process.env.PATH = path;
    }
  });
});
