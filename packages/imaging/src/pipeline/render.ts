// Turning plans and parameters into sharp calls. Together with layers.ts and transform.ts
// this folder is the only code that touches sharp.

import sharp, { type AnimationOptions, type Color, type Matrix3x3, type Sharp } from 'sharp';
import { defaults, type Orientation, type ParsedParams, type Rgba } from '../grammar';
import type { Budget } from './budget';
import { ImagingError } from './errors';
import {
  inputFormat,
  isDecodable,
  type DecodableFormat,
  type InputFormat,
  type OutputFormat,
} from './formats';
import { orientedSize, visibleBox, type Plan, type Size } from './geometry';
import { readJpegHeader } from './jpeg-header';
import { checkSvg } from './svg';

export interface OpenedImage {
  image: Sharp;
  size: Size;
  orientation: Orientation;
  format: DecodableFormat;
  hasAlpha: boolean;
  /** Frames decoded: sharp opens the first page of an animation only. */
  frames: number;
  /**
   * The file's animation when it holds several frames (`image` is the first of them;
   * animation.ts opens them all): each frame's delay in ms and the loop count (0: forever).
   */
  animation: { frames: number; delays: number[]; loop: number } | null;
}

export interface SvgInput {
  /** The origin lets its SVG images be rasterised. */
  allowed: boolean;
  /** Dots per inch to draw at (librsvg's 72 gives the document's own size). */
  density?: number;
}

const UNSUPPORTED: Partial<Record<InputFormat, string>> = {
  unknown: 'not a recognised image format',
  heic: 'HEIC (HEVC) images cannot be converted by this edge; through=heic sends them unconverted',
};

const TOO_MANY_PIXELS = 'image has more pixels than allowed';

/**
 * Opens an image after checking its format, and its pixel count from the header alone:
 * sharp's limitInputPixels refuses a decompression bomb before any pixel is decoded. A JPEG's
 * header is read here (jpeg-header.ts), saving sharp's metadata() call; other formats', and a
 * JPEG's that reader is unsure of, by sharp. SVG is checked to be self-contained first, and
 * drawn with librsvg's memory limits kept.
 */
export async function openImage(
  data: Buffer,
  maxInputPixels: number,
  svg: SvgInput = { allowed: false },
): Promise<OpenedImage> {
  const format = inputFormat(data, svg.allowed);
  if (!isDecodable(format)) {
    throw new ImagingError(
      'unsupported-format',
      UNSUPPORTED[format] ?? `${format} images cannot be converted`,
    );
  }
  if (format === 'svg') await checkEmbedded(checkSvg(data), maxInputPixels);
  const image = sharp(data, {
    limitInputPixels: maxInputPixels,
    failOn: 'error',
    ...(format === 'svg' ? { unlimited: false, density: svg.density ?? 72 } : {}),
  });
  const jpeg = format === 'jpeg' ? readJpegHeader(data) : null;
  if (jpeg) {
    if (jpeg.width * jpeg.height > maxInputPixels) throw new ImagingError('too-large', TOO_MANY_PIXELS);
    const size = { width: jpeg.width, height: jpeg.height };
    return {
      image,
      size,
      orientation: jpeg.orientation,
      format,
      hasAlpha: false,
      frames: 1,
      animation: null,
    };
  }
  const meta = await run(() => image.metadata());
  const orientation = (meta.orientation ?? 1) as Orientation;
  return {
    image,
    size: { width: meta.width, height: meta.height },
    orientation,
    format,
    hasAlpha: meta.hasAlpha,
    frames: 1,
    animation:
      meta.pages && meta.pages > 1
        ? { frames: meta.pages, delays: meta.delay ?? [], loop: meta.loop ?? 0 }
        : null,
  };
}

/** librsvg decodes the raster images an SVG embeds whole: their pixels count against the limit. */
async function checkEmbedded(images: Buffer[], maxInputPixels: number): Promise<void> {
  let pixels = 0;
  for (const embedded of images) {
    const meta = await run(() => sharp(embedded).metadata());
    pixels += meta.width * meta.height * (meta.pages ?? 1);
    if (pixels > maxInputPixels) {
      throw new ImagingError('too-large', 'the SVG embeds images with more pixels than allowed');
    }
  }
}

/** Runs sharp work, turning its failures (corrupt or truncated data) into ImagingErrors. */
export async function run<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof ImagingError) throw error;
    const detail = error instanceof Error ? (error.message.split('\n')[0] ?? '') : String(error);
    if (detail.includes('exceeds pixel limit')) {
      throw new ImagingError('too-large', TOO_MANY_PIXELS, { cause: error });
    }
    // sharp's `timeout` killed the pipeline ("timeout: 40% complete").
    if (detail.startsWith('timeout')) {
      throw new ImagingError('timeout', 'the conversion took too long', { cause: error });
    }
    throw new ImagingError('invalid-image', `image could not be processed: ${detail}`, { cause: error });
  }
}

/** Runs a pipeline to its output, stopped by sharp when the transform's deadline passes. */
export function runTimed<T>(image: Sharp, budget: Budget, output: (image: Sharp) => Promise<T>): Promise<T> {
  const seconds = budget.secondsLeft();
  if (seconds > 0) image.timeout({ seconds });
  return run(() => output(image));
}

export function colour(c: Rgba): Color {
  return { r: c.r, g: c.g, b: c.b, alpha: c.alpha / 255 };
}

/**
 * Expresses a plan in sharp's own order: pre-resize extract, resize, flop/rotate, post-resize
 * extract, extend. The resize is always declared, even at the same size (a no-op for sharp),
 * because sharp decides from call order whether extracts and rotations happen before or
 * after resizing, and this order keeps them all where the plan expects.
 */
export function applyPlan(image: Sharp, plan: Plan, background: Rgba): Sharp {
  const { crop, source, scaled, turn, window } = plan;
  const visible = visibleBox(plan);
  if (!visible) throw new ImagingError('empty-clip', 'the output clip holds only padding');
  if (crop.width !== source.width || crop.height !== source.height) image.extract(crop);
  if (plan.strategy) {
    // sharp scales to cover the window and places it by the strategy in one pass. Turning first
    // puts the window in the turned image, as the plan has it; nothing geometric follows.
    if (turn.flop) image.flop();
    if (turn.angle) image.rotate(turn.angle);
    return image.resize({
      width: window.width,
      height: window.height,
      fit: 'cover',
      position: sharp.strategy[plan.strategy],
    });
  }
  image.resize({ width: scaled.width, height: scaled.height, fit: 'fill' });
  if (turn.flop) image.flop();
  if (turn.angle) image.rotate(turn.angle);
  const oriented = orientedSize(plan);
  if (visible.width !== oriented.width || visible.height !== oriented.height) image.extract(visible);
  const extend = {
    top: visible.top - window.top,
    left: visible.left - window.left,
    bottom: window.top + window.height - visible.top - visible.height,
    right: window.left + window.width - visible.left - visible.width,
  };
  if (extend.top || extend.left || extend.bottom || extend.right) {
    image.extend({ ...extend, background: colour(background) });
  }
  return image;
}

// Rec. 601 luma, as ImageMagick's grayscale, and the usual sepia tone matrix.
const GREY: Matrix3x3 = [
  [0.299, 0.587, 0.114],
  [0.299, 0.587, 0.114],
  [0.299, 0.587, 0.114],
];
const SEPIA: Matrix3x3 = [
  [0.393, 0.769, 0.189],
  [0.349, 0.686, 0.168],
  [0.272, 0.534, 0.131],
];

export function applyBlur(image: Sharp, params: ParsedParams): Sharp {
  if (params.blur) image.blur(Math.max(0.3, params.blur.sigma));
  return image;
}

/**
 * The filters after the blur, as sharp operations: grayscale and sepia fold into one colour
 * matrix, brightness, contrast and invert into one linear map (v * a + b), both applied once.
 */
export function applyFilters(image: Sharp, params: ParsedParams): Sharp {
  if (params.unsharp) {
    // ImageMagick's unsharp: areas below the threshold (0..1 of the range) stay untouched.
    const { sigma, gain = 1, threshold = 0 } = params.unsharp;
    image.sharpen({ sigma, m1: threshold > 0 ? 0 : gain, m2: gain, x1: threshold * 100 });
  }
  const grey = (params.grayscale ?? 0) / 100;
  const sepia = (params.sepia ?? 0) / 100;
  if (grey || sepia) image.recomb(multiply(blend(SEPIA, sepia), blend(GREY, grey)));
  const { a, b } = linearFilter(params);
  if (a !== 1 || b !== 0) image.linear(a, b);
  return image;
}

/** Whether any filter (blur included) changes the pixels. */
export function hasFilters(params: ParsedParams): boolean {
  return (
    Boolean(params.blur || params.unsharp || params.grayscale || params.sepia) || hasLinearFilter(params)
  );
}

/** Whether the filters include the linear map, which sharp runs after compositing. */
export function hasLinearFilter(params: ParsedParams): boolean {
  const { a, b } = linearFilter(params);
  return a !== 1 || b !== 0;
}

function linearFilter(params: ParsedParams): { a: number; b: number } {
  const brightness = (params.brightness ?? 100) / 100;
  const contrast = (params.contrast ?? 100) / 100;
  // Brightness scales, contrast stretches around mid-grey, invert mirrors: in that order.
  const a = brightness * contrast;
  const b = 128 * (1 - contrast);
  return params.invert ? { a: -a, b: 255 - b } : { a, b };
}

function blend(matrix: Matrix3x3, amount: number): Matrix3x3 {
  return matrix.map((line, i) => line.map((v, j) => (i === j ? 1 - amount : 0) + v * amount)) as Matrix3x3;
}

function multiply(m: Matrix3x3, n: Matrix3x3): Matrix3x3 {
  return m.map((line) =>
    [0, 1, 2].map((j) => line.reduce((sum, v, k) => sum + v * (n[k]?.[j] ?? 0), 0)),
  ) as Matrix3x3;
}

/**
 * Encoder settings. `q` is JPEG-like: AVIF reaches similar quality with lower numbers, so it
 * gets two thirds of it (75 -> 50, sharp's own default). AVIF effort stays low so that cache
 * misses remain fast. s=2 writes back only the orientation tag still in force. An animation's
 * frames keep their delays and loop count (`animation`); mp4 is encoded by video.ts instead.
 */
export function applyOutput(
  image: Sharp,
  format: OutputFormat,
  params: ParsedParams,
  orientation: Orientation,
  animation?: AnimationOptions,
): Sharp {
  const quality = Math.max(1, params.q ?? defaults.quality);
  switch (format) {
    case 'jpeg':
      image.jpeg({ quality, optimiseCoding: params.o !== 0, mozjpeg: false });
      break;
    case 'png':
      image.png();
      break;
    case 'gif':
      image.gif(animation);
      break;
    case 'webp':
      image.webp({ quality, lossless: params.lossless === 1, ...animation });
      break;
    case 'avif':
      image.avif({ quality: Math.max(1, Math.round((quality * 2) / 3)), effort: 3 });
      break;
  }
  if (params.s === 2 && orientation !== 1 && format !== 'gif') {
    image.withExif({ IFD0: { Orientation: String(orientation) } });
  }
  return image;
}
