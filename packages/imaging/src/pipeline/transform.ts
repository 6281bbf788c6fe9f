// The image transform. Its stages run in the URL's fixed order: geometry (input clip, input
// rotation, resize, output clip, output rotation), filters, image overlays, text overlays,
// output format. They share one sharp pipeline; the only intermediate buffer is raw pixels,
// and only when overlays meet a filter that sharp would otherwise run after compositing.
// Animations keep all their frames when the output can animate (animation.ts).

import sharp, { type OverlayOptions, type Sharp } from 'sharp';
import { defaults, type InfoFormat, type ParsedParams } from '../grammar';
import { convertAnimation, DEFAULT_MAX_FRAMES, openAnimation } from './animation';
import { Budget, type BudgetLimits } from './budget';
import { ImagingError } from './errors';
import { describeImage } from './info';
import {
  CONTENT_TYPES,
  inputFormat,
  negotiateFormat,
  passesThrough,
  supportsAlpha,
  type InputFormat,
  type OutputFormat,
} from './formats';
import { MAX_SIDE, planGeometry, remainingOrientation, rescaleSource, sizeOf, type Plan } from './geometry';
import { backgroundLayer, overlayLayers, textLayers, type LayerContext } from './layers';
import {
  applyBlur,
  applyFilters,
  applyOutput,
  applyPlan,
  colour,
  hasLinearFilter,
  openImage,
  runTimed,
  type OpenedImage,
} from './render';
import { evenSides } from './video';

export interface TransformLimits extends BudgetLimits {
  /** Decompression-bomb guard, checked from the image header before decoding. */
  maxInputPixels: number;
  /** Larger outputs are scaled down proportionally (as are sides above 8192 px). */
  maxOutputPixels: number;
  /** Frames an animation may have (default DEFAULT_MAX_FRAMES); more: 422. */
  maxFrames?: number;
}

export interface TransformRequest {
  source: Buffer;
  params: ParsedParams;
  /** The client's Accept header, for `webp:X` / `avif:X`. */
  accept?: string | null;
  /** Fetches an `l=` overlay image from the same origin; a rejection becomes a 422. */
  loadOverlay: (path: string) => Promise<Buffer>;
  /** The organization may use `t=` text overlays. */
  allowText: boolean;
  /** The origin lets its SVG images be rasterised (default: SVG is unrecognised data). */
  allowSvg?: boolean;
  limits: TransformLimits;
}

export interface TransformResult {
  data: Buffer;
  /** `json` / `blurhash`: data describes the image (`f=json`, `f=blurhash`). */
  format: InputFormat | OutputFormat | InfoFormat;
  contentType: string;
  /** 0 when passed through unconverted. */
  width: number;
  height: number;
  /** The format depended on the Accept header: answer with `Vary: Accept`. */
  varyAccept: boolean;
  /** `through` matched: data is the source as is. */
  passedThrough: boolean;
  /** Units charged against the budget (0 when passed through). */
  cost: number;
}

/** Rejects with ImagingError for anything caused by the request or the image. */
export async function transform(request: TransformRequest): Promise<TransformResult> {
  const { source, params, limits } = request;
  // One budget and one deadline for the conversion and for describing its result.
  const budget = new Budget(limits);
  const result = await convert(request, budget);
  if (!params.info) return result;
  // sharp reads no video: an MP4's colours and hash come from its first frame, drawn alike as a still.
  const still =
    result.format === 'mp4'
      ? (await convert({ ...request, params: { ...params, f: 'png' } }, budget)).data
      : result.data;
  const answer = await describeImage(params.info, source, { ...result, still }, params, budget, {
    maxInputPixels: limits.maxInputPixels,
    allowSvg: request.allowSvg ?? false,
  });
  return {
    ...result,
    data: answer.data,
    format: params.info,
    contentType: answer.contentType,
    width: answer.info.width,
    height: answer.info.height,
    passedThrough: false,
    cost: budget.cost,
  };
}

/** A conversion's own result: an image or a video, never a description. */
interface Converted extends TransformResult {
  format: InputFormat | OutputFormat;
}

async function convert(request: TransformRequest, budget: Budget): Promise<Converted> {
  const { source, params, limits } = request;
  if (params.t && !request.allowText) {
    throw new ImagingError('text-disabled', 'text overlays are not enabled for this organization');
  }
  const svg = { allowed: request.allowSvg ?? false };
  const input = inputFormat(source, svg.allowed);
  if (passesThrough(params.through, input)) {
    const contentType = CONTENT_TYPES[input];
    return {
      data: source,
      format: input,
      contentType,
      width: 0,
      height: 0,
      varyAccept: false,
      passedThrough: true,
      cost: 0,
    };
  }
  let opened = await openImage(source, limits.maxInputPixels, svg);
  const { format, varyAccept } = negotiateFormat(params.f, opened.format, request.accept, opened.hasAlpha);
  const animation = openAnimation(source, opened, format, {
    maxInputPixels: limits.maxInputPixels,
    maxFrames: limits.maxFrames ?? DEFAULT_MAX_FRAMES,
  });
  const background = params.b ?? defaults.background;
  const env = { orientation: opened.orientation, maxSide: MAX_SIDE, maxPixels: limits.maxOutputPixels };
  let plan = planGeometry(opened.size, params, env);
  if (format === 'mp4') plan = evenSides(plan);
  if (opened.format === 'svg') ({ opened, plan } = await svgAtScale(source, opened, plan, limits));
  budget.chargeBase(animation ?? opened, plan, params, format);

  const base = sizeOf(plan.window);
  const ctx: LayerContext = {
    base,
    loadOverlay: request.loadOverlay,
    maxInputPixels: limits.maxInputPixels,
    maxPixels: limits.maxOutputPixels,
    budget,
    frames: animation?.frames ?? 1,
  };
  const layers: OverlayOptions[] = [];
  for (const overlay of params.l ?? []) layers.push(...(await overlayLayers(overlay, ctx)));
  for (const text of params.t ?? []) layers.push(...(await textLayers(text, ctx)));
  // Masks can make the base transparent; a format without alpha shows the background there.
  if (!supportsAlpha(format) && layers.some((layer) => layer.blend === 'dest-in')) {
    layers.push(backgroundLayer(base, background));
  }

  // The still image, or an animation's frames (all at once or one by one: animation.ts).
  const draw = async (image: Sharp, by: Plan): Promise<Sharp> => {
    if (!supportsAlpha(format)) image.flatten({ background: colour(background) });
    applyPlan(image, by, background);
    applyBlur(image, params);
    // libvips computes on demand: sharpening a blur in one pipeline recomputes the blur's wide
    // kernel for every window the sharpening reads (6 s against 1.5 s apart, for 6 MP at the
    // largest sigmas). The blurred pixels are made once instead.
    if (params.blur && params.unsharp) image = await rawCopy(image, budget);
    applyFilters(image, params);
    if (layers.length > 0) {
      if (hasLinearFilter(params)) image = await rawCopy(image, budget);
      image.composite(layers);
    }
    return image;
  };
  const orientation = remainingOrientation(params, opened.orientation);
  if (animation) {
    const layered = layers.length > 0;
    const output = { format, params, background, layered, orientation };
    const { data, size } = await convertAnimation(animation, plan, draw, output, budget);
    const contentType = CONTENT_TYPES[format];
    return { data, format, contentType, ...size, varyAccept, passedThrough: false, cost: budget.cost };
  }
  const image = await draw(opened.image, plan);
  applyOutput(image, format, params, orientation);
  const { data, info } = await runTimed(image, budget, (done) => done.toBuffer({ resolveWithObject: true }));
  return {
    data,
    format,
    contentType: CONTENT_TYPES[format],
    width: info.width,
    height: info.height,
    varyAccept,
    passedThrough: false,
    cost: budget.cost,
  };
}

// sharp's accepted range for `density`.
const DENSITY = { min: 1, max: 100_000 };

/**
 * Opens an SVG again, drawn at the scale its plan resizes to (librsvg draws at any density),
 * so that a small document comes out sharp rather than enlarged; never beyond the input
 * pixel limit.
 */
async function svgAtScale(
  source: Buffer,
  opened: OpenedImage,
  plan: Plan,
  limits: TransformLimits,
): Promise<{ opened: OpenedImage; plan: Plan }> {
  const { crop, scaled } = plan;
  const scale = Math.min(
    Math.max(scaled.width / crop.width, scaled.height / crop.height),
    // One pixel more per side: librsvg rounds the drawn size up.
    Math.sqrt(limits.maxInputPixels / ((opened.size.width + 1) * (opened.size.height + 1))),
  );
  if (scale === 1) return { opened, plan };
  const density = Math.min(Math.max(72 * scale, DENSITY.min), DENSITY.max);
  const drawn = await openImage(source, limits.maxInputPixels, { allowed: true, density });
  return { opened: drawn, plan: rescaleSource(plan, drawn.size) };
}

/** Runs the pipeline so far into raw pixels and starts a new one on them. */
async function rawCopy(image: Sharp, budget: Budget): Promise<Sharp> {
  const { data, info } = await runTimed(image, budget, (done) =>
    done.raw().toBuffer({ resolveWithObject: true }),
  );
  return sharp(data, { raw: { width: info.width, height: info.height, channels: info.channels } });
}
