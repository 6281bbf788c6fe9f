// The geometric half of the pipeline, as pure arithmetic. The URL applies input clip, input
// rotation, resize, output clip and output rotation in that order, but sharp runs its
// operations in an order of its own; so each step rewrites a symbolic Plan, and render.ts
// expresses the finished Plan with one sharp pipeline.

import type {
  Clip,
  GeometryParams,
  Gravity,
  Orientation,
  Placement,
  Rotation,
  SmartGravity,
} from '../grammar';
import { ImagingError } from './errors';

export interface Size {
  width: number;
  height: number;
}

export interface Box extends Size {
  left: number;
  top: number;
}

/** Mirror left-right (flop) first, then rotate clockwise: the order sharp applies them in. */
export interface Turn {
  flop: boolean;
  angle: 0 | 90 | 180 | 270;
}

/**
 * The output is `window` of the image obtained by cutting `crop` out of the stored pixels,
 * scaling it to `scaled` and applying `turn`. The window may reach past that image; the
 * excess is padding in the background colour.
 */
export interface Plan {
  source: Size;
  crop: Box;
  scaled: Size;
  turn: Turn;
  window: Box;
  /**
   * An a=2 crop placed by looking at the pixels: sharp chooses the window's place as it
   * resizes (the grammar lets no clip or rotation follow), `window` only gives its size.
   */
  strategy?: SmartGravity;
}

export interface GeometryRequest extends GeometryParams {
  dpr?: number;
}

export interface GeometryEnv {
  /** EXIF orientation of the source, for `auto` rotations. */
  orientation: Orientation;
  maxSide: number;
  maxPixels: number;
}

type GeometryStep = (plan: Plan, request: GeometryRequest, env: GeometryEnv) => Plan;

/** Largest output side; bigger requests are scaled down proportionally. */
export const MAX_SIDE = 8192;

const geometrySteps: readonly GeometryStep[] = [inputClip, inputRotation, resize, outputClip, outputRotation];

export function planGeometry(source: Size, request: GeometryRequest, env: GeometryEnv): Plan {
  const whole = { left: 0, top: 0, ...source };
  const start: Plan = { source, crop: whole, scaled: source, turn: NO_TURN, window: whole };
  return geometrySteps.reduce((plan, step) => step(plan, request, env), start);
}

/** The EXIF orientation still describing the output (rotations consume it). */
export function remainingOrientation(request: GeometryRequest, orientation: Orientation): Orientation {
  return request.ir || request.or === 'auto' ? 1 : orientation;
}

// --- steps (fixed order) ---------------------------------------------------------------

function inputClip(plan: Plan, request: GeometryRequest): Plan {
  if (!request.ic) return plan;
  // First step: the current image is still the stored one.
  const crop = clipBox(request.ic, request.ig ?? 1, plan.source, 'ic');
  const size = sizeOf(crop);
  return { ...plan, crop, scaled: size, window: { left: 0, top: 0, ...size } };
}

function inputRotation(plan: Plan, request: GeometryRequest, env: GeometryEnv): Plan {
  if (!request.ir) return plan;
  const turn = turnOf(request.ir, env.orientation);
  return { ...plan, turn, window: { left: 0, top: 0, ...turnSize(plan.scaled, turn) } };
}

function resize(plan: Plan, request: GeometryRequest, env: GeometryEnv): Plan {
  // Nothing has narrowed the window yet, so it is the whole (turned) image.
  const target = resizeTarget(sizeOf(plan.window), request, env);
  const resized = { ...plan, scaled: turnSize(target.scaled, plan.turn), window: target.window };
  const cropped = target.window.width < target.scaled.width || target.window.height < target.scaled.height;
  return typeof request.g === 'string' && request.a === 2 && cropped
    ? { ...resized, strategy: request.g }
    : resized;
}

function outputClip(plan: Plan, request: GeometryRequest): Plan {
  if (!request.oc) return plan;
  return narrowWindow(plan, clipBox(request.oc, request.og ?? 1, sizeOf(plan.window), 'oc'));
}

function outputRotation(plan: Plan, request: GeometryRequest, env: GeometryEnv): Plan {
  if (!request.or) return plan;
  const turn = turnOf(request.or, request.ir ? 1 : env.orientation);
  return {
    ...plan,
    turn: composeTurns(plan.turn, turn),
    window: turnBox(plan.window, orientedSize(plan), turn),
  };
}

// --- resizing --------------------------------------------------------------------------

interface Target {
  /** Scaled size in the turned orientation. */
  scaled: Size;
  window: Box;
}

function resizeTarget(current: Size, request: GeometryRequest, env: GeometryEnv): Target {
  const dpr = request.dpr ?? 1;
  const w = request.w === undefined ? undefined : Math.max(1, Math.round(request.w * dpr));
  const h = request.h === undefined ? undefined : Math.max(1, Math.round(request.h * dpr));
  const enlarge = request.u !== 0;
  if (w !== undefined && h !== undefined) {
    const box = within({ width: w, height: h }, env);
    // A strategy's crop is placed by sharp; the centre stands for it in the plan.
    const gravity = typeof request.g === 'number' ? request.g : 5;
    return boxTarget(current, box, { ...request, gravity, enlarge, maxSide: env.maxSide });
  }
  // Only one side (or none): the other follows the aspect ratio whatever the mode.
  let scale = w !== undefined ? w / current.width : h !== undefined ? h / current.height : 1;
  if (!enlarge) scale = Math.min(scale, 1);
  const scaled = within(scaleSize(current, scale), env);
  return { scaled, window: { left: 0, top: 0, ...scaled } };
}

function boxTarget(
  current: Size,
  box: Size,
  options: {
    a?: 0 | 2 | 3;
    gravity: Gravity;
    fp?: GeometryRequest['fp'];
    enlarge: boolean;
    maxSide: number;
  },
): Target {
  const { a: mode = 1, gravity, fp, enlarge, maxSide } = options;
  const limit = (scale: number) => (enlarge ? scale : Math.min(scale, 1));
  const fit = limit(Math.min(box.width / current.width, box.height / current.height));
  switch (mode) {
    case 0: {
      const scaled = scaleSize(current, fit);
      return { scaled, window: { left: 0, top: 0, ...scaled } };
    }
    case 1: {
      // Like sharp's fill without enlargement: each side is capped on its own.
      const scaled = enlarge
        ? box
        : { width: Math.min(box.width, current.width), height: Math.min(box.height, current.height) };
      return { scaled, window: { left: 0, top: 0, ...scaled } };
    }
    case 2: {
      const cover = limit(Math.max(box.width / current.width, box.height / current.height));
      // A very thin box would otherwise scale the image far past the limits before cropping.
      const scaled = scaleSize(current, Math.min(cover, maxSide / current.width, maxSide / current.height));
      const shown = { width: Math.min(box.width, scaled.width), height: Math.min(box.height, scaled.height) };
      const at = fp ? around(fp, scaled, shown) : anchor(gravity, scaled, shown);
      return { scaled, window: { ...at, ...shown } };
    }
    case 3: {
      const scaled = scaleSize(current, fit);
      const at = anchor(gravity, box, scaled);
      // 0 - x rather than -x: no -0 in plans.
      return { scaled, window: { left: 0 - at.left, top: 0 - at.top, ...box } };
    }
  }
}

function scaleSize(size: Size, scale: number): Size {
  return {
    width: Math.max(1, Math.round(size.width * scale)),
    height: Math.max(1, Math.round(size.height * scale)),
  };
}

/** Scales a size down proportionally into the side and pixel limits. */
function within(size: Size, env: GeometryEnv): Size {
  const k = Math.min(
    1,
    env.maxSide / size.width,
    env.maxSide / size.height,
    Math.sqrt(env.maxPixels / (size.width * size.height)),
  );
  if (k >= 1) return size;
  return { width: Math.max(1, Math.floor(size.width * k)), height: Math.max(1, Math.floor(size.height * k)) };
}

// --- boxes, gravity, clips -------------------------------------------------------------

export function sizeOf(box: Box): Size {
  return { width: box.width, height: box.height };
}

export function intersect(a: Box, b: Box): Box | null {
  const left = Math.max(a.left, b.left);
  const top = Math.max(a.top, b.top);
  const right = Math.min(a.left + a.width, b.left + b.width);
  const bottom = Math.min(a.top + a.height, b.top + b.height);
  return right > left && bottom > top ? { left, top, width: right - left, height: bottom - top } : null;
}

/** Size of the scaled image once turned. */
export function orientedSize(plan: Plan): Size {
  return turnSize(plan.scaled, plan.turn);
}

/** The part of the window covered by the image (the rest is padding), or null if none. */
export function visibleBox(plan: Plan): Box | null {
  return intersect(plan.window, { left: 0, top: 0, ...orientedSize(plan) });
}

/** Narrows the window to `box`, given relative to the window's top-left corner. */
export function narrowWindow(plan: Plan, box: Box): Plan {
  const window = { ...box, left: plan.window.left + box.left, top: plan.window.top + box.top };
  return { ...plan, window };
}

function column(gravity: Gravity): 0 | 1 | 2 {
  return ((gravity - 1) % 3) as 0 | 1 | 2;
}

function row(gravity: Gravity): 0 | 1 | 2 {
  return Math.floor((gravity - 1) / 3) as 0 | 1 | 2;
}

function along(position: 0 | 1 | 2, outer: number, inner: number): number {
  return position === 0 ? 0 : position === 1 ? Math.floor((outer - inner) / 2) : outer - inner;
}

/** Top-left corner of `inner` placed inside `outer` at a gravity. */
function anchor(gravity: Gravity, outer: Size, inner: Size): { left: number; top: number } {
  return {
    left: along(column(gravity), outer.width, inner.width),
    top: along(row(gravity), outer.height, inner.height),
  };
}

/** Top-left corner of `inner` centred on a focal point of `outer` (0..1 fractions), kept inside. */
function around(point: { x: number; y: number }, outer: Size, inner: Size): { left: number; top: number } {
  const axis = (at: number, extent: number, length: number) =>
    Math.min(Math.max(Math.round(at * extent - length / 2), 0), extent - length);
  return { left: axis(point.x, outer.width, inner.width), top: axis(point.y, outer.height, inner.height) };
}

/**
 * The same plan over the source rendered at another size (an SVG rasterised at the scale of
 * the output, so that it is drawn sharp rather than enlarged): the crop is scaled with it.
 */
export function rescaleSource(plan: Plan, source: Size): Plan {
  const sx = source.width / plan.source.width;
  const sy = source.height / plan.source.height;
  const { crop } = plan;
  const left = Math.min(Math.round(crop.left * sx), source.width - 1);
  const top = Math.min(Math.round(crop.top * sy), source.height - 1);
  const right = Math.min(Math.max(Math.round((crop.left + crop.width) * sx), left + 1), source.width);
  const bottom = Math.min(Math.max(Math.round((crop.top + crop.height) * sy), top + 1), source.height);
  return { ...plan, source, crop: { left, top, width: right - left, height: bottom - top } };
}

/**
 * Where an overlay of `item` size lands on `base`: at its gravity `lg` (default centre),
 * moved by x/y px plus xr/yr ratios of the base size, away from the gravity's edges.
 */
export function place(placement: Placement, base: Size, item: Size): Box {
  const gravity = placement.lg ?? 5;
  const at = anchor(gravity, base, item);
  const dx = (placement.x ?? 0) + Math.round((placement.xr ?? 0) * base.width);
  const dy = (placement.y ?? 0) + Math.round((placement.yr ?? 0) * base.height);
  return {
    left: at.left + (column(gravity) === 2 ? -dx : dx),
    top: at.top + (row(gravity) === 2 ? -dy : dy),
    width: item.width,
    height: item.height,
  };
}

/**
 * A clip rectangle in pixels of `size`. The gravity is the coordinates' origin: from a
 * right or bottom edge they grow inwards, from the centre they grow right and down.
 */
export function clipBox(clip: Clip, gravity: Gravity, size: Size, key: string): Box {
  const sx = clip.unit === 'ratio' ? size.width : 1;
  const sy = clip.unit === 'ratio' ? size.height : 1;
  const axis = (position: 0 | 1 | 2, extent: number, v: number) =>
    position === 0 ? v : position === 1 ? extent / 2 + v : extent - v;
  const clamp = (v: number, extent: number) => Math.min(Math.max(Math.round(v), 0), extent);
  const xs = [clip.rect.x1 * sx, clip.rect.x2 * sx].map((v) => axis(column(gravity), size.width, v));
  const ys = [clip.rect.y1 * sy, clip.rect.y2 * sy].map((v) => axis(row(gravity), size.height, v));
  const left = clamp(Math.min(...xs), size.width);
  const right = clamp(Math.max(...xs), size.width);
  const top = clamp(Math.min(...ys), size.height);
  const bottom = clamp(Math.max(...ys), size.height);
  if (right <= left || bottom <= top) throw new ImagingError('empty-clip', `${key} lies outside the image`);
  return { left, top, width: right - left, height: bottom - top };
}

// --- orientation -----------------------------------------------------------------------

const NO_TURN: Turn = { flop: false, angle: 0 };

/** What undoes each EXIF orientation, as sharp's autoOrient does. */
const EXIF_TURNS: Record<Orientation, Turn> = {
  1: NO_TURN,
  2: { flop: true, angle: 0 },
  3: { flop: false, angle: 180 },
  4: { flop: true, angle: 180 },
  5: { flop: true, angle: 270 },
  6: { flop: false, angle: 90 },
  7: { flop: true, angle: 90 },
  8: { flop: false, angle: 270 },
};

function turnOf(rotation: Rotation, orientation: Orientation): Turn {
  return EXIF_TURNS[rotation === 'auto' ? orientation : rotation];
}

/** `then` applied after `first`. A mirror reverses the sense of the rotation before it. */
export function composeTurns(first: Turn, then: Turn): Turn {
  const angle = (then.angle + (then.flop ? 360 - first.angle : first.angle)) % 360;
  return { flop: first.flop !== then.flop, angle: angle as Turn['angle'] };
}

export function turnSize(size: Size, turn: Turn): Size {
  return turn.angle % 180 === 0 ? size : { width: size.height, height: size.width };
}

/** Where a box of an image of `size` ends up once the image is turned. */
export function turnBox(box: Box, size: Size, turn: Turn): Box {
  const { width, height, top } = box;
  const left = turn.flop ? size.width - box.left - width : box.left;
  switch (turn.angle) {
    case 0:
      return { left, top, width, height };
    case 90:
      return { left: size.height - top - height, top: left, width: height, height: width };
    case 180:
      return { left: size.width - left - width, top: size.height - top - height, width, height };
    case 270:
      return { left: top, top: size.width - left - width, width: height, height: width };
  }
}
