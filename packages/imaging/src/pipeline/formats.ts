// Image formats: recognising the input, `through`, and choosing the output (Accept negotiation).

import type { FallbackFormat, FormatParam, ThroughFormat } from '../grammar';

export type InputFormat = 'jpeg' | 'png' | 'gif' | 'webp' | 'avif' | 'tiff' | 'bmp' | 'heic' | 'unknown';
export type DecodableFormat = Extract<InputFormat, 'jpeg' | 'png' | 'gif' | 'webp' | 'avif' | 'tiff'>;
export type OutputFormat = Extract<InputFormat, 'jpeg' | 'png' | 'gif' | 'webp' | 'avif'>;

export const CONTENT_TYPES: Record<InputFormat, string> = {
  jpeg: 'image/jpeg',
  png: 'image/png',
  gif: 'image/gif',
  webp: 'image/webp',
  avif: 'image/avif',
  tiff: 'image/tiff',
  bmp: 'image/bmp',
  heic: 'image/heic',
  unknown: 'application/octet-stream',
};

// Only these reach the decoder: other libvips loaders (SVG, PDF, ...) stay out of reach of
// origin content. sharp's prebuilt libvips cannot decode HEIC (HEVC) or BMP at all.
const DECODABLE: ReadonlySet<InputFormat> = new Set(['jpeg', 'png', 'gif', 'webp', 'avif', 'tiff']);

export function isDecodable(format: InputFormat): format is DecodableFormat {
  return DECODABLE.has(format);
}

const AVIF_BRANDS = new Set(['avif', 'avis']);
const HEIC_BRANDS = new Set(['heic', 'heix', 'hevc', 'hevx', 'heim', 'heis', 'mif1', 'msf1']);

/** The format announced by the file's magic bytes. */
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
  return 'unknown';
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

const PARAM_FORMATS: Record<Exclude<FallbackFormat, 'auto'> | 'webp' | 'avif', OutputFormat> = {
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
  const fallback = (format: FallbackFormat): OutputFormat => {
    if (format !== 'auto') return PARAM_FORMATS[format];
    if (input === 'tiff') return hasAlpha ? 'png' : 'jpeg';
    return input;
  };
  if (f === undefined) return { format: fallback('auto'), varyAccept: false };
  const [first, otherwise] = f.split(':') as [keyof typeof PARAM_FORMATS, FallbackFormat | undefined];
  const preferred = PARAM_FORMATS[first];
  if (otherwise === undefined) return { format: preferred, varyAccept: false };
  return {
    format: accepts(accept, `image/${preferred}`) ? preferred : fallback(otherwise),
    varyAccept: true,
  };
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
  return format !== 'jpeg';
}
