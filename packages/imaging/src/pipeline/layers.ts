// Image overlays (l=) and text overlays (t=) as composite layers for the base image. Each
// layer is cut to the part that lands on the base (sharp refuses larger layers). A mask
// layer does not paint: it keeps the base only where the overlay is white, black or opaque.

import sharp, { type OverlayOptions, type Sharp } from 'sharp';
import { defaults, type Mask, type OverlayParams, type Rgba, type TextParams } from '../grammar';
import { ImagingError } from './errors';
import {
  intersect,
  MAX_SIDE,
  narrowWindow,
  place,
  planGeometry,
  sizeOf,
  visibleBox,
  type Box,
  type Size,
} from './geometry';
import type { Budget } from './budget';
import { applyPlan, colour, openImage, run, runTimed } from './render';

export interface LayerContext {
  /** Size of the base image the layers go on. */
  base: Size;
  loadOverlay: (path: string) => Promise<Buffer>;
  maxInputPixels: number;
  maxPixels: number;
  budget: Budget;
  /** Frames of the base: the layers are composited onto every frame of an animation. */
  frames: number;
}

export async function overlayLayers(overlay: OverlayParams, ctx: LayerContext): Promise<OverlayOptions[]> {
  let data: Buffer;
  try {
    data = await ctx.loadOverlay(overlay.path);
  } catch (cause) {
    throw new ImagingError('overlay-unavailable', `overlay ${overlay.path} could not be loaded`, { cause });
  }
  const opened = await openImage(data, ctx.maxInputPixels);
  const env = { orientation: opened.orientation, maxSide: MAX_SIDE, maxPixels: ctx.maxPixels };
  const plan = planGeometry(opened.size, overlay, env);
  const at = place(overlay, ctx.base, sizeOf(plan.window));
  const shown = onBase(at, ctx.base);
  if (!shown) return outsideMask(overlay.mask, ctx.base);
  ctx.budget.chargeOverlay(opened, shown, overlay.mask && ctx.base, ctx.frames);
  const narrowed = narrowWindow(plan, { ...shown, left: shown.left - at.left, top: shown.top - at.top });
  const background = overlay.b ?? defaults.background;
  const image = visibleBox(narrowed)
    ? applyPlan(opened.image, narrowed, background)
    : sharp({
        create: { width: shown.width, height: shown.height, channels: 4, background: colour(background) },
      });
  return [await layer(image, shown, overlay.mask, ctx)];
}

export async function textLayers(text: TextParams, ctx: LayerContext): Promise<OverlayOptions[]> {
  const wrapWidth = text.w ?? ctx.base.width;
  ctx.budget.chargeText(text, estimatedTextBox(text, wrapWidth, ctx.maxPixels), ctx.frames);
  const content = text.ellipsize ? await ellipsized(text, wrapWidth) : text.text;
  const rendered = await renderText(text, content, wrapWidth);
  const box = { width: text.w ?? rendered.info.width, height: text.h ?? rendered.info.height };
  const at = place(text, ctx.base, box);
  const shown = onBase(at, ctx.base);
  if (!shown) return outsideMask(text.mask, ctx.base);
  // The shown part of the box, relative to the box, and the rendered text inside it.
  const view = { ...shown, left: shown.left - at.left, top: shown.top - at.top };
  const ink = intersect(view, { left: 0, top: 0, width: rendered.info.width, height: rendered.info.height });
  const transparent = { r: 0, g: 0, b: 0, alpha: 0 };
  let image: Sharp;
  if (ink) {
    const { width, height } = rendered.info;
    image = sharp(rendered.data, { raw: { width, height, channels: 4 } }).extract(ink);
    const extend = {
      top: ink.top - view.top,
      left: ink.left - view.left,
      bottom: view.top + view.height - ink.top - ink.height,
      right: view.left + view.width - ink.left - ink.width,
    };
    if (extend.top || extend.left || extend.bottom || extend.right)
      image.extend({ ...extend, background: transparent });
  } else {
    image = sharp({
      create: { width: view.width, height: view.height, channels: 4, background: transparent },
    });
  }
  const background = text.b ?? defaults.textBackground;
  if (background.alpha > 0) {
    const fill = {
      width: view.width,
      height: view.height,
      channels: 4 as const,
      background: colour(background),
    };
    image.composite([{ input: { create: fill }, blend: 'dest-over' }]);
  }
  return [await layer(image, shown, text.mask, ctx)];
}

function onBase(at: Box, base: Size): Box | null {
  return intersect(at, { left: 0, top: 0, ...base });
}

async function layer(
  image: Sharp,
  at: Box,
  mask: Mask | undefined,
  ctx: LayerContext,
): Promise<OverlayOptions> {
  const { base, budget } = ctx;
  const { data, info } = await runTimed(image, budget, (done) =>
    done.toColourspace('srgb').ensureAlpha().raw().toBuffer({ resolveWithObject: true }),
  );
  const raw = { width: info.width, height: info.height, channels: 4 as const };
  if (!mask) return { input: data, raw, left: at.left, top: at.top };
  // The mask as an alpha channel over the whole base, `dest-in` then multiplies the base's
  // alpha by it. Outside the overlay the base disappears unless the mask keeps it (`:1`).
  const rgba = sharp(data, { raw });
  const coverage =
    mask.type === 'alpha'
      ? rgba.extractChannel(3)
      : mask.type === 'white'
        ? rgba.flatten({ background: '#000000' }).toColourspace('b-w')
        : rgba.flatten({ background: '#ffffff' }).toColourspace('b-w').negate();
  const alpha = await runTimed(coverage, budget, (done) => done.raw().toBuffer());
  const blank = sharp({ create: { width: at.width, height: at.height, channels: 3, background: '#000000' } });
  const spread = await runTimed(blank, budget, (done) =>
    done
      .joinChannel(alpha, { raw: { width: at.width, height: at.height, channels: 1 } })
      .extend({
        top: at.top,
        left: at.left,
        bottom: base.height - at.top - at.height,
        right: base.width - at.left - at.width,
        background: { r: 0, g: 0, b: 0, alpha: mask.keepOutside ? 1 : 0 },
      })
      .raw()
      .toBuffer(),
  );
  return { input: spread, raw: { ...base, channels: 4 }, blend: 'dest-in' };
}

/** A mask lying wholly off the base clears it, unless the mask keeps what is outside. */
function outsideMask(mask: Mask | undefined, base: Size): OverlayOptions[] {
  if (!mask || mask.keepOutside) return [];
  const clear = { ...base, channels: 4 as const, background: { r: 0, g: 0, b: 0, alpha: 0 } };
  return [{ input: { create: clear }, blend: 'dest-in' }];
}

// --- text --------------------------------------------------------------------------------

const ALIGN = ['left', 'centre', 'right'] as const;
const WRAP = ['word', 'char', 'word-char'] as const;
const DIRECTION_MARK = ['', '\u200e', '\u200f'] as const;

async function renderText(text: TextParams, content: string, wrapWidth: number) {
  const size = text.size ?? defaults.textSize;
  const fg = text.f ?? defaults.textColour;
  const hex = [fg.r, fg.g, fg.b].map((v) => v.toString(16).padStart(2, '0')).join('');
  // Pango takes alpha as 1..65535; 0 would mean "unset".
  const attributes = [`foreground="#${hex}"`, `fgalpha="${Math.max(1, fg.alpha * 257)}"`];
  if (text.strike) attributes.push('strikethrough="true"');
  // A leading LRM/RLM sets the base direction of each paragraph.
  const mark = DIRECTION_MARK[text.dir ?? 0];
  const lines = content.split('\n').map((line) => mark + escapeMarkup(line));
  return run(() =>
    sharp({
      text: {
        text: `<span ${attributes.join(' ')}>${lines.join('\n')}</span>`,
        font: fontDescription(text, size),
        dpi: 72, // 1pt = 1px
        rgba: true,
        width: wrapWidth,
        align: ALIGN[text.align ?? 0],
        justify: text.justify === 1,
        wrap: WRAP[text.wrap ?? 0],
        ...(text.linespacing === undefined ? {} : { spacing: Math.round(size * text.linespacing) }),
      },
    })
      .raw()
      .toBuffer({ resolveWithObject: true }),
  );
}

function fontDescription(text: TextParams, size: number): string {
  const font = text.font ?? { name: defaults.font };
  // "Family, Style Size @axis=value": the comma ends the family list unambiguously.
  const style = font.instance ? ` ${font.instance}` : '';
  const axes = font.variations?.map(([tag, value]) => `${tag}=${value}`).join(',');
  return `${font.name},${style} ${size}${axes ? ` @${axes}` : ''}`;
}

function escapeMarkup(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Longest prefix of the text that, followed by "…", fits the w x h box. */
async function ellipsized(text: TextParams, wrapWidth: number): Promise<string> {
  const fits = async (content: string) => {
    const { info } = await renderText(text, content, wrapWidth);
    return (text.w === undefined || info.width <= text.w) && (text.h === undefined || info.height <= text.h);
  };
  if (await fits(text.text)) return text.text;
  const chars = [...text.text];
  let low = 0;
  let high = chars.length - 1;
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (await fits(`${chars.slice(0, middle).join('')}…`)) low = middle;
    else high = middle - 1;
  }
  return `${chars.slice(0, low).join('')}…`;
}

/**
 * The box Pango would draw, estimated before it draws: square glyphs, wrapped at the box
 * width, with 1.5 line height (or the requested spacing). Refuses text that would be huge.
 */
function estimatedTextBox(text: TextParams, wrapWidth: number, maxPixels: number): Size {
  const size = text.size ?? defaults.textSize;
  const lineHeight = Math.max(size * 1.5, size * (text.linespacing ?? 0));
  let lines = 0;
  let width = 0;
  for (const line of text.text.split('\n')) {
    const length = [...line].length * size;
    lines += Math.max(1, Math.ceil(length / wrapWidth));
    width = Math.max(width, Math.min(length, wrapWidth));
  }
  const box = { width, height: lines * lineHeight };
  if (box.width * box.height > maxPixels) {
    throw new ImagingError('too-large', 'text overlay would be too large to render');
  }
  return box;
}

export function backgroundLayer(base: Size, background: Rgba): OverlayOptions {
  const fill = { ...base, channels: 4 as const, background: colour({ ...background, alpha: 255 }) };
  return { input: { create: fill }, blend: 'dest-over' };
}
