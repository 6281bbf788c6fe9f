// Animated GIF and WebP. When the output can animate (GIF, WebP, MP4), every frame goes through
// the transform and keeps its delay, and the loop count is kept; other outputs take the first
// frame, which is what openImage opens.
//
// sharp holds an animation as its frames stacked top to bottom in one tall image, and crops,
// resizes, mirrors, pads and colour-maps it page by page. A quarter turn (sharp refuses it on
// pages), a blur or sharpening (they would mix the edges of neighbouring frames) and overlays
// (sharp would lay each once on the tall image) run frame by frame instead, after one pass that
// crops and resizes all the frames: the frames are at their smallest when handled one by one.
//
// A GIF to f=mp4 whose transform is geometry alone (clips, resize, padding: no turn, filter or
// overlay) skips sharp: ffmpeg decodes, crops, scales and pads it itself (video.ts), since
// sharp's decoding and resizing would cost as much CPU again as the whole ffmpeg conversion.

import sharp, { type Sharp } from 'sharp';
import type { Orientation, ParsedParams, Rgba } from '../grammar';
import type { Budget } from './budget';
import { ImagingError } from './errors';
import type { DecodableFormat, OutputFormat } from './formats';
import { sizeOf, type Plan, type Size } from './geometry';
import { applyOutput, applyPlan, hasFilters, runTimed, type OpenedImage } from './render';
import { encodeGifMp4, encodeMp4 } from './video';

/** Frames an animation may have unless the limits say otherwise (EDGE_MAX_FRAMES). */
export const DEFAULT_MAX_FRAMES = 1000;

/** GIF's and browsers' delay for a frame that states none. */
const DEFAULT_DELAY_MS = 100;

const ANIMATED_OUTPUTS: ReadonlySet<OutputFormat> = new Set<OutputFormat>(['gif', 'webp', 'mp4']);
// Other formats' pages (a TIFF's, an AVIF's) are no animation: their sizes may differ, and they
// have no delays.
const ANIMATED_INPUTS: ReadonlySet<DecodableFormat> = new Set<DecodableFormat>(['gif', 'webp']);

export interface Animation {
  /** The file, for ffmpeg to decode itself. */
  source: Buffer;
  /** Every frame, stacked top to bottom. */
  image: Sharp;
  format: DecodableFormat;
  /** One frame's size. */
  size: Size;
  frames: number;
  /** Each frame's delay in ms. */
  delays: number[];
  /** Times to play (0: forever). */
  loop: number;
}

export interface AnimationLimits {
  maxInputPixels: number;
  maxFrames: number;
}

/**
 * The source's frames when the source is an animation and the output can animate, else null.
 * Refuses f=mp4 of a still image (400), and animations with too many frames or too many pixels
 * in all their frames together (422), from the header alone.
 */
export function openAnimation(
  source: Buffer,
  opened: OpenedImage,
  output: OutputFormat,
  limits: AnimationLimits,
): Animation | null {
  const { size } = opened;
  const animation = ANIMATED_INPUTS.has(opened.format) ? opened.animation : null;
  if (!animation) {
    if (output === 'mp4') {
      throw new ImagingError(
        'not-animated',
        'f=mp4 converts animated GIF and WebP images; this image is not one',
      );
    }
    return null;
  }
  if (!ANIMATED_OUTPUTS.has(output)) return null;
  const { frames } = animation;
  if (frames > limits.maxFrames) {
    throw new ImagingError(
      'too-large',
      `the animation has ${frames} frames, more than the ${limits.maxFrames} allowed`,
    );
  }
  if (size.width * size.height * frames > limits.maxInputPixels) {
    throw new ImagingError(
      'too-large',
      'the animation has more pixels (all its frames together) than allowed',
    );
  }
  return {
    source,
    image: sharp(source, { animated: true, limitInputPixels: limits.maxInputPixels, failOn: 'error' }),
    format: opened.format,
    size,
    frames,
    delays: Array.from({ length: frames }, (_, i) => animation.delays[i] ?? DEFAULT_DELAY_MS),
    loop: animation.loop,
  };
}

/** Draws one image (the whole stack of frames, or one frame) by a plan: geometry, filters, overlays. */
export type Draw = (image: Sharp, plan: Plan) => Promise<Sharp>;

export interface AnimationOutput {
  format: OutputFormat;
  params: ParsedParams;
  background: Rgba;
  /** Overlays are composited onto the frames. */
  layered: boolean;
  /** The EXIF orientation still in force, for s=2. */
  orientation: Orientation;
}

/** Transforms every frame and encodes the animation; returns the file and one frame's size. */
export async function convertAnimation(
  animation: Animation,
  plan: Plan,
  draw: Draw,
  output: AnimationOutput,
  budget: Budget,
): Promise<{ data: Buffer; size: Size }> {
  // A smart crop would wander from frame to frame: animations keep the centre the plan holds.
  const centred: Plan = { ...plan, strategy: undefined };
  const size = sizeOf(plan.window);
  if (ffmpegDraws(animation.format, centred, output)) {
    const { source: gif, delays } = animation;
    const video = { gif, plan: centred, background: output.background, delays };
    return { data: await encodeGifMp4(video, budget), size };
  }
  const frameByFrame =
    centred.turn.angle !== 0 || output.params.blur || output.params.unsharp || output.layered;
  const frames = frameByFrame
    ? await drawEachFrame(animation, centred, draw, output.background, budget)
    : await draw(animation.image, centred);
  if (output.format === 'mp4') {
    const data = await runTimed(frames.removeAlpha().toColourspace('srgb'), budget, (image) =>
      image.raw().toBuffer(),
    );
    return { data: await encodeMp4({ data, ...size, delays: animation.delays }, budget), size };
  }
  applyOutput(frames, output.format, output.params, output.orientation, {
    delay: animation.delays,
    loop: animation.loop,
  });
  const data = await runTimed(frames, budget, (image) => image.toBuffer());
  return { data, size };
}

/**
 * Whether ffmpeg can make the video from the GIF file alone, as sharp would draw it: only
 * geometry that its crop, scale and pad filters express (a smart crop is already centred).
 */
export function ffmpegDraws(input: DecodableFormat, plan: Plan, output: AnimationOutput): boolean {
  return (
    output.format === 'mp4' &&
    input === 'gif' &&
    !plan.strategy &&
    !plan.turn.flop &&
    plan.turn.angle === 0 &&
    !hasFilters(output.params) &&
    !output.layered
  );
}

/** Crops and resizes all frames at once, then draws the rest of the plan on each frame. */
async function drawEachFrame(
  animation: Animation,
  plan: Plan,
  draw: Draw,
  background: Rgba,
  budget: Budget,
): Promise<Sharp> {
  const scaledBox = { left: 0, top: 0, ...plan.scaled };
  const scaling: Plan = { ...plan, turn: { flop: false, angle: 0 }, window: scaledBox };
  const rest: Plan = { ...plan, source: plan.scaled, crop: scaledBox };
  const scaled = await runTimed(applyPlan(animation.image, scaling, background), budget, (image) =>
    image.raw().toBuffer({ resolveWithObject: true }),
  );
  const raw = { ...plan.scaled, channels: scaled.info.channels };
  const frameBytes = raw.width * raw.height * raw.channels;
  const drawn: Buffer[] = [];
  let frameInfo = { width: 0, height: 0, channels: raw.channels };
  for (let i = 0; i < animation.frames; i++) {
    const frame = sharp(scaled.data.subarray(i * frameBytes, (i + 1) * frameBytes), { raw });
    const { data, info } = await runTimed(await draw(frame, rest), budget, (image) =>
      image.raw().toBuffer({ resolveWithObject: true }),
    );
    drawn.push(data);
    frameInfo = info;
  }
  const { width, height, channels } = frameInfo;
  return sharp(Buffer.concat(drawn), {
    raw: { width, height: height * animation.frames, channels, pageHeight: height },
  });
}
