// Image formats: recognising the input, `through`, and choosing the output (Accept negotiation).

import sharp from 'sharp';
import type { FallbackFormat, FormatParam, ThroughFormat } from '../grammar';

export type InputFormat =
  'jpeg' | 'png' | 'gif' | 'webp' | 'avif' | 'tiff' | 'bmp' | 'heic' | 'svg' | 'unknown';
export type DecodableFormat = Extract<
  InputFormat,
  'jpeg' | 'png' | 'gif' | 'webp' | 'avif' | 'tiff' | 'heic' | 'svg'
>;
/** `mp4`: an animation as H.264 video (f=mp4), encoded by ffmpeg. */
export type OutputFormat = Extract<InputFormat, 'jpeg' | 'png' | 'gif' | 'webp' | 'avif'> | 'mp4';

export const CONTENT_TYPES: Record<InputFormat | OutputFormat, string> = {
  jpeg: 'image/jpeg',
  png: 'image/png',
  gif: 'image/gif',
  webp: 'image/webp',
  avif: 'image/avif',
  tiff: 'image/tiff',
  bmp: 'image/bmp',
  heic: 'image/heic',
  svg: 'image/svg+xml',
  mp4: 'video/mp4',
  unknown: 'application/octet-stream',
};

/**
 * sharp's prebuilt libvips reads AVIF through libheif but has no HEVC decoder, so HEIC only
 * where libvips was built with one (a global libvips); its loader then lists `.heic`.
 */
export const HEIC_DECODABLE = (sharp.format.heif.input.fileSuffix ?? []).includes('.heic');

// Only these reach the decoder: other libvips loaders (PDF, ...) stay out of reach of origin
// content. SVG only from origins that allow it, after svg.ts has checked it; never BMP.
const DECODABLE: ReadonlySet<InputFormat> = new Set<InputFormat>([
  ...(['jpeg', 'png', 'gif', 'webp', 'avif', 'tiff', 'svg'] as const),
  ...(HEIC_DECODABLE ? (['heic'] as const) : []),
]);

export function isDecodable(format: InputFormat): format is DecodableFormat {
  return DECODABLE.has(format);
}

const AVIF_BRANDS = new Set(['avif', 'avis']);
const HEIC_BRANDS = new Set(['heic', 'heix', 'hevc', 'hevx', 'heim', 'heis', 'mif1', 'msf1']);

// SVG is text: an XML declaration, comments and a doctype may stand before the root element.
const SVG_ROOT =
  /^(?:\xef\xbb\xbf)?\s*(?:<\?xml[^>]*\?>\s*)?(?:(?:<!--[\s\S]*?-->|<!DOCTYPE[^>[]*(?:\[[\s\S]*?\])?\s*>)\s*)*<svg[\s>/]/i;
const SVG_SNIFF_BYTES = 4096;

/** The format announced by the file's magic bytes (or an SVG root element). */
export function sniffFormat(data: Uint8Array): InputFormat {
  const ascii = (start: number, end: number) => String.fromCharCode(...data.subarray(start, end));
  if (data[0] === 0xff && data[1] === 0xd8 && data[2] === 0xff) return 'jpeg';
  if (ascii(0, 8) === '\x89PNG\r\n\x1a\n') return 'png';
  if (ascii(0, 4) === 'GIF8') return 'gif';
  if (ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WEBP') return 'webp';
  if (ascii(0, 4) === 'II*\0' || ascii(0, 4) === 'MM\0*') return 'tiff';
  if (ascii(0, 2) === 'BM') return 'bmp';
  if (ascii(4, 8) === 'ftyp') {
    const boxSize = [0, 1, 2, 3].reduce((size, i) => size * 256 + (data[i] ?? 0), 0);
    const boxEnd = Math.min(data.length, boxSize);
    // Major brand at 8, then the compatible brands from 16 (12..16 is the minor version).
    const brands = [ascii(8, 12)];
    for (let at = 16; at + 4 <= boxEnd; at += 4) brands.push(ascii(at, at + 4));
    if (brands.some((brand) => AVIF_BRANDS.has(brand))) return 'avif';
    if (brands.some((brand) => HEIC_BRANDS.has(brand))) return 'heic';
  }
  if (SVG_ROOT.test(Buffer.from(data.subarray(0, SVG_SNIFF_BYTES)).toString('latin1'))) return 'svg';
  return 'unknown';
}

/** The format to treat data as: an SVG its origin does not allow is unrecognised data. */
export function inputFormat(data: Uint8Array, allowSvg: boolean): InputFormat {
  const format = sniffFormat(data);
  return format === 'svg' && !allowSvg ? 'unknown' : format;
}

const THROUGH_FORMATS: Record<Exclude<ThroughFormat, 'auto'>, InputFormat> = {
  jpg: 'jpeg',
  png: 'png',
  gif: 'gif',
  webp: 'webp',
  bmp: 'bmp',
  heic: 'heic',
};

/** Whether `through` sends this input unconverted (`auto`: whatever cannot be converted). */
export function passesThrough(through: readonly ThroughFormat[] | undefined, input: InputFormat): boolean {
  return (through ?? []).some((f) => (f === 'auto' ? !isDecodable(input) : THROUGH_FORMATS[f] === input));
}

export interface Negotiated {
  format: OutputFormat;
  /** The choice depended on the Accept header: the response needs `Vary: Accept`. */
  varyAccept: boolean;
}

const PARAM_FORMATS: Record<Exclude<FallbackFormat, 'auto'>, OutputFormat> = {
  jpg: 'jpeg',
  png: 'png',
  gif: 'gif',
  webp: 'webp',
  avif: 'avif',
};

export function negotiateFormat(
  f: FormatParam | undefined,
  input: DecodableFormat,
  accept: string | null | undefined,
  hasAlpha: boolean,
): Negotiated {
  const resolve = (format: FallbackFormat): OutputFormat => {
    if (format !== 'auto') return PARAM_FORMATS[format];
    // Inputs no encoder writes back become PNG (with alpha) or JPEG.
    if (input === 'tiff' || input === 'heic' || input === 'svg') return hasAlpha ? 'png' : 'jpeg';
    return input;
  };
  if (f === undefined) return { format: resolve('auto'), varyAccept: false };
  if (f === 'mp4') return { format: 'mp4', varyAccept: false };
  const chain = f.split(':') as FallbackFormat[];
  const choice = chainChoice(f, accept);
  return { format: resolve(chain[choice ?? 0] ?? 'auto'), varyAccept: choice !== null };
}

/**
 * The element of an `f=` fallback chain the Accept header selects: the first one it names
 * explicitly, else the last (the unconditional fallback). Null when `f` is no chain: the
 * format then does not depend on Accept. The edge keys cached variants by it.
 */
export function chainChoice(f: FormatParam | undefined, accept: string | null | undefined): number | null {
  if (!f?.includes(':')) return null;
  const chain = f.split(':') as FallbackFormat[];
  const last = chain.length - 1;
  const named = chain.findIndex(
    (element, i) => i < last && element !== 'auto' && accepts(accept, `image/${PARAM_FORMATS[element]}`),
  );
  return named < 0 ? last : named;
}

/** True when the Accept header names the type explicitly with a non-zero q (wildcards do not count). */
export function accepts(accept: string | null | undefined, type: string): boolean {
  return (accept ?? '').split(',').some((range) => {
    const [name = '', ...parameters] = range.split(';').map((part) => part.trim().toLowerCase());
    if (name !== type) return false;
    const q = parameters.find((p) => p.startsWith('q='));
    return q === undefined || Number(q.slice(2)) > 0;
  });
}

export function supportsAlpha(format: OutputFormat): boolean {
  return format !== 'jpeg' && format !== 'mp4';
}
