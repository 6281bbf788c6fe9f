// What the pipeline's tests share: images drawn by sharp (so each test states the picture it
// needs in a line and can tell where every pixel came from), and the pipeline run the way the
// edge runs it. Not part of the package: only the tests import it.

import sharp, { type Colour, type Sharp } from 'sharp';
import { expect } from 'vitest';
import { parsePath } from '../grammar';
import { ImagingError } from './errors';
import { transform, type TransformRequest, type TransformResult } from './transform';

/** Limits no test input reaches: a test that is about a limit sets that one itself. */
export const noLimits = { maxInputPixels: 40_000_000, maxOutputPixels: 40_000_000, maxCost: 0, timeoutMs: 0 };

export type Rgb = [number, number, number];

/** A canvas background with nothing on it: an image with an alpha channel. */
export const transparent = { r: 0, g: 0, b: 0, alpha: 0 };

/** A filled rectangle on a canvas, in the canvas's pixels. */
export interface Rectangle {
  left: number;
  top: number;
  width: number;
  height: number;
  colour: string;
}

/**
 * A `width` x `height` canvas of one colour (a `{r, g, b, alpha}` one has an alpha channel) with
 * `rectangles` painted over it, ready to encode.
 */
export function canvas(
  width: number,
  height: number,
  background: Colour,
  rectangles: Rectangle[] = [],
): Sharp {
  const channels = typeof background === 'string' ? 3 : 4;
  return sharp({ create: { width, height, channels, background } }).composite(
    rectangles.map(({ left, top, width, height, colour }) => ({
      input: { create: { width, height, channels, background: colour } },
      left,
      top,
    })),
  );
}

/** Grey noise: the most detail an image can have, so a photograph's cost to encode at worst. */
export function noise(width: number, height: number, sigma: number): Sharp {
  const noise = { type: 'gaussian' as const, mean: 128, sigma };
  return sharp({ create: { width, height, channels: 3, background: '#808080', noise } });
}

/**
 * Frames of `width` x `height` stacked top to bottom, as sharp holds an animation: each filled
 * with its colour, with a black block of `corner` at its top left when given (to see where a
 * crop, a turn or a mirror put the frame). Ready to encode as GIF, WebP or TIFF pages.
 */
export function stackedFrames(
  colours: readonly Rgb[],
  width: number,
  height: number,
  corner = { width: 0, height: 0 },
): Sharp {
  const raw = Buffer.alloc(width * height * colours.length * 3);
  colours.forEach((colour, frame) => {
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        const inCorner = x < corner.width && y < corner.height;
        raw.set(inCorner ? [0, 0, 0] : colour, ((frame * height + y) * width + x) * 3);
      }
    }
  });
  return sharp(raw, { raw: { width, height: height * colours.length, channels: 3, pageHeight: height } });
}

/**
 * Runs the pipeline on the parameters of a delivery `path` (`/w=30/a.gif`), with text overlays
 * allowed and `overlays` as the origin's other files for `l=`.
 */
export function convert(
  path: string,
  source: Buffer,
  { overlays = {}, ...options }: Partial<TransformRequest> & { overlays?: Record<string, Buffer> } = {},
): Promise<TransformResult> {
  const parsed = parsePath(path);
  if (!parsed.ok) throw new Error(parsed.reason);
  return transform({
    source,
    params: parsed.params,
    loadOverlay: async (overlayPath) => {
      const overlay = overlays[overlayPath];
      if (!overlay) throw new Error(`no ${overlayPath}`);
      return overlay;
    },
    allowText: true,
    limits: noLimits,
    ...options,
  });
}

/** The ImagingError `work` is refused with (a test fails if it succeeds or fails otherwise). */
export async function failure(work: Promise<unknown>): Promise<ImagingError> {
  const error = await work.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ImagingError);
  return error as ImagingError;
}
