// The image transform. Its stages run in the URL's fixed order: geometry (input clip, input
// rotation, resize, output clip, output rotation), filters, image overlays, text overlays,
// output format. They share one sharp pipeline; the only intermediate buffer is raw pixels,
// and only when overlays meet a filter that sharp would otherwise run after compositing.

import sharp, { type OverlayOptions, type Sharp } from 'sharp';
import { defaults, type ParsedParams } from '../grammar';
import { Budget, type BudgetLimits } from './budget';
import { ImagingError } from './errors';
import {
  CONTENT_TYPES,
  negotiateFormat,
  passesThrough,
  sniffFormat,
  supportsAlpha,
  type InputFormat,
} from './formats';
import { MAX_SIDE, planGeometry, remainingOrientation, sizeOf } from './geometry';
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
} from './render';

export interface TransformLimits extends BudgetLimits {
  /** Decompression-bomb guard, checked from the image header before decoding. */
  maxInputPixels: number;
  /** Larger outputs are scaled down proportionally (as are sides above 8192 px). */
  maxOutputPixels: number;
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
  limits: TransformLimits;
}

export interface TransformResult {
  data: Buffer;
  format: InputFormat;
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
  if (params.t && !request.allowText) {
    throw new ImagingError('text-disabled', 'text overlays are not enabled for this organization');
  }
  const input = sniffFormat(source);
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
  const budget = new Budget(limits);
  const opened = await openImage(source, limits.maxInputPixels);
  const { format, varyAccept } = negotiateFormat(params.f, opened.format, request.accept, opened.hasAlpha);
  const background = params.b ?? defaults.background;
  const env = { orientation: opened.orientation, maxSide: MAX_SIDE, maxPixels: limits.maxOutputPixels };
  const plan = planGeometry(opened.size, params, env);
  budget.chargeBase(opened, plan, params, format);

  let image: Sharp = opened.image;
  if (!supportsAlpha(format)) image.flatten({ background: colour(background) });
  applyPlan(image, plan, background);
  applyBlur(image, params);
  // libvips computes on demand: sharpening a blur in one pipeline recomputes the blur's wide
  // kernel for every window the sharpening reads (6 s against 1.5 s apart, for 6 MP at the
  // largest sigmas). The blurred pixels are made once instead.
  if (params.blur && params.unsharp) image = await rawCopy(image, budget);
  applyFilters(image, params);

  const base = sizeOf(plan.window);
  const ctx: LayerContext = {
    base,
    loadOverlay: request.loadOverlay,
    maxInputPixels: limits.maxInputPixels,
    maxPixels: limits.maxOutputPixels,
    budget,
  };
  const layers: OverlayOptions[] = [];
  for (const overlay of params.l ?? []) layers.push(...(await overlayLayers(overlay, ctx)));
  for (const text of params.t ?? []) layers.push(...(await textLayers(text, ctx)));
  if (layers.length > 0) {
    if (hasLinearFilter(params)) image = await rawCopy(image, budget);
    // Masks can make the base transparent; a format without alpha shows the background there.
    if (!supportsAlpha(format) && layers.some((layer) => layer.blend === 'dest-in')) {
      layers.push(backgroundLayer(base, background));
    }
    image.composite(layers);
  }

  applyOutput(image, format, params, remainingOrientation(params, opened.orientation));
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

/** Runs the pipeline so far into raw pixels and starts a new one on them. */
async function rawCopy(image: Sharp, budget: Budget): Promise<Sharp> {
  const { data, info } = await runTimed(image, budget, (done) =>
    done.raw().toBuffer({ resolveWithObject: true }),
  );
  return sharp(data, { raw: { width: info.width, height: info.height, channels: info.channels } });
}
