// What a transform may spend. Work is charged, from image headers and the plan, before sharp
// decodes a pixel of it: over the budget the request is refused (422). The deadline bounds
// what the estimate misses (a loaded machine, a pathological image): sharp stops the pipeline
// and the request is answered 503, to be retried.

import type { ParsedParams, TextParams } from '../grammar';
import { ImagingError } from './errors';
import type { InputFormat, OutputFormat } from './formats';
import type { Plan, Size } from './geometry';

/**
 * Cost of each kind of work in units per megapixel; a unit is about one millisecond of one
 * core of the machine the figures were measured on (2-core x86, libvips through sharp, one
 * thread per pipeline): a 12 MP JPEG decodes in ~90 ms, blurs at sigma 100 in ~1 s, and
 * encodes as GIF in ~11 s. Upper estimates: shrink-on-load and cheap inputs cost less.
 */
const DECODE: Record<InputFormat, number> = {
  jpeg: 8,
  png: 14,
  gif: 14,
  tiff: 14,
  bmp: 14,
  webp: 55,
  avif: 80,
  heic: 80,
  // librsvg's cost follows the drawing, not the pixels: charged like the costliest decoders.
  svg: 80,
  unknown: 80,
};
// mp4: x264 at preset veryfast on one thread, ~50 per megapixel of noisy frames, plus the
// conversion to yuv420p.
const ENCODE: Record<OutputFormat, number> = { jpeg: 15, png: 45, gif: 900, webp: 125, avif: 830, mp4: 60 };
const READ = 5;
const RESAMPLE = 25;
const COLOUR_MAP = 10;
/** Pango drawing text, per megapixel of the drawn box. */
const TEXT = 100;

export interface BudgetLimits {
  /** Units a transform may cost (1 unit ≈ 1 ms of one core); 0 turns the check off. */
  maxCost: number;
  /** The whole transform's deadline; 0 turns it off. */
  timeoutMs: number;
}

const megapixels = (size: Size) => (size.width * size.height) / 1e6;

export class Budget {
  private spent = 0;
  private readonly deadline: number;

  constructor(
    private readonly limits: BudgetLimits,
    private readonly now: () => number = Date.now,
  ) {
    this.deadline = limits.timeoutMs > 0 ? now() + limits.timeoutMs : Infinity;
  }

  get cost(): number {
    return Math.round(this.spent);
  }

  /** Charges work about to be done; refuses it (422) when the total passes the budget. */
  charge(units: number, what: string): void {
    this.spent += units;
    if (this.limits.maxCost > 0 && this.spent > this.limits.maxCost) {
      throw new ImagingError(
        'too-costly',
        `the conversion would cost ${this.cost} units, more than the ${this.limits.maxCost} allowed ` +
          `(${what}): ask for fewer pixels, a cheaper format or milder filters`,
      );
    }
  }

  /** Whole seconds left for sharp's `timeout` (it counts in seconds); past the deadline: 503. */
  secondsLeft(): number {
    const left = this.millisecondsLeft();
    return left === Infinity ? 0 : Math.ceil(left / 1000);
  }

  /** Time left before the deadline (Infinity without one); past it: 503. */
  millisecondsLeft(): number {
    if (this.deadline === Infinity) return Infinity;
    const left = this.deadline - this.now();
    if (left <= 0) throw new ImagingError('timeout', 'the conversion took too long');
    return left;
  }

  /** Decoding the base image and running its geometry, filters and encoder. */
  chargeBase(
    input: { format: InputFormat; size: Size; frames: number },
    plan: Plan,
    params: ParsedParams,
    output: OutputFormat,
  ): void {
    const frames = input.frames;
    const source = megapixels(input.size);
    const scaled = megapixels(plan.scaled);
    const out = megapixels(plan.window);
    this.charge(
      frames * source * (DECODE[input.format] + READ) + frames * scaled * RESAMPLE,
      'decoding and resizing',
    );
    let filters = 0;
    if (params.blur) filters += 3 + 0.8 * params.blur.sigma;
    if (params.unsharp) filters += 45 + 5 * params.unsharp.sigma;
    if (params.grayscale || params.sepia) filters += COLOUR_MAP;
    if (params.brightness !== undefined || params.contrast !== undefined || params.invert)
      filters += COLOUR_MAP;
    if (filters > 0) this.charge(frames * out * filters, 'filters');
    this.charge(frames * out * ENCODE[output], `encoding ${output}`);
  }

  /**
   * An overlay image: decoding it and compositing its layer onto each of the base's frames; a
   * mask spreads over the whole base (`maskedBase`), twice: once drawn, once composited.
   */
  chargeOverlay(
    input: { format: InputFormat; size: Size },
    layer: Size,
    maskedBase: Size | undefined,
    frames: number,
  ): void {
    const composite = (megapixels(layer) + (maskedBase ? 2 * megapixels(maskedBase) : 0)) * RESAMPLE;
    this.charge(megapixels(input.size) * (DECODE[input.format] + READ) + frames * composite, 'overlays');
  }

  /**
   * `f=json` / `f=blurhash` reading a result back: decoding it for the colour statistics and the
   * hash (an upper estimate: JPEG and WebP shrink on load to the small copy those need).
   */
  chargeInfo(result: { format: InputFormat; size: Size }): void {
    this.charge(megapixels(result.size) * (DECODE[result.format] + READ + RESAMPLE), 'describing the image');
  }

  /**
   * A text overlay: Pango draws the box once, or about a dozen times to ellipsize it; it is
   * composited onto each of the base's frames.
   */
  chargeText(text: TextParams, box: Size, frames: number): void {
    const renders = text.ellipsize ? 12 : 1;
    this.charge(megapixels(box) * (TEXT * renders + frames * RESAMPLE), 'text overlays');
  }
}
