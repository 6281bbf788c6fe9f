/** The preview tester's controls for the common parameters; everything else goes in `extra`. */
export interface PreviewControls {
  width: string;
  height: string;
  /** `a`: 0 fit inside, 1 force, 2 crop to fill, 3 pad (delivery-url.md section 2). */
  mode: '' | '0' | '1' | '2' | '3';
  format: string;
  quality: string;
  /** Free text, e.g. `blur=5x2,grayscale=100`: added as written. */
  extra: string;
}

export const FORMATS = [
  '',
  'auto',
  'jpg',
  'png',
  'webp',
  'avif',
  'gif',
  'mp4',
  'webp:auto',
  'avif:auto',
] as const;
export const COMPARED_FORMATS = ['jpg', 'webp', 'avif'] as const;

const positiveInt = (value: string) => /^\d+$/.test(value.trim()) && Number(value) > 0;

/** `w=…,h=…,a=…,f=…,q=…,{extra}` in that order, leaving out what is not set. */
export function parameterString(controls: PreviewControls, formatOverride?: string): string {
  const parts: string[] = [];
  if (positiveInt(controls.width)) parts.push(`w=${Number(controls.width)}`);
  if (positiveInt(controls.height)) parts.push(`h=${Number(controls.height)}`);
  if (controls.mode !== '') parts.push(`a=${controls.mode}`);
  const format = formatOverride ?? controls.format;
  if (format !== '') parts.push(`f=${format}`);
  if (/^\d+$/.test(controls.quality.trim())) parts.push(`q=${Number(controls.quality)}`);
  const extra = controls.extra
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '' && !(formatOverride !== undefined && part.startsWith('f=')));
  parts.push(...extra);
  return parts.join(',');
}

/**
 * The original as the origin has it: `through` sends every format it can name unconverted (only
 * AVIF and TIFF are not among them), so the bytes measured are the origin's own, not a copy
 * re-encoded by the edge.
 */
export const ORIGINAL_PARAMETERS = 'through=jpg:png:gif:webp:bmp:heic';

/**
 * The `f=json` answer for a variant. It goes after the other parameters: `f=json` is kept apart
 * from the format, so `f=webp,f=json` describes the WebP.
 */
export function infoParameters(parameters: string): string {
  return parameters ? `${parameters},f=json` : 'f=json';
}

/** The path after the host: `/{parameters}/{image path}`, or just the image path. */
export function deliveryPath(parameters: string, imagePath: string): string {
  const path = `/${imagePath.replace(/^\/+/, '')}`;
  return parameters ? `/${parameters}${path}` : path;
}

/** How much smaller the converted image is than the original, in percent (negative: larger). */
export function savingPercent(originalBytes: number, convertedBytes: number): number | null {
  if (originalBytes <= 0) return null;
  return Math.round((1 - convertedBytes / originalBytes) * 1000) / 10;
}
