// An SVG from an origin is a document, not pixels: librsvg would follow its references (files,
// URLs, XInclude, CSS imports) and libxml2 would expand its entities. Only self-contained
// documents are rasterised; anything that could reach outside, or grow while parsed, is
// refused before librsvg sees it.

import { ImagingError } from './errors';

/** SVG text beyond this is refused unparsed. */
export const MAX_SVG_BYTES = 1024 ** 2;

const FORBIDDEN: ReadonlyArray<readonly [RegExp, string]> = [
  [/<!ENTITY/i, 'entity declarations'],
  [/<!DOCTYPE[^>]*\[/i, 'an internal doctype subset'],
  [/<(?:[\w-]+:)?script[\s/>]/i, 'scripts'],
  [/<(?:[\w-]+:)?foreignObject[\s/>]/i, 'foreignObject'],
  [/@import/i, 'CSS imports'],
  // A CSS escape can spell `url(` or a scheme past the patterns below.
  [/\\[0-9a-f]/i, 'CSS escapes'],
];

// Any attribute ending in `href` (href, xlink:href, XInclude's href), and CSS url() up to
// its first `)` (a `)` inside quotes only makes the target look foreign: refused).
const HREF = /href\s*=\s*(?:"([^"]*)"|'([^']*)')/gi;
const CSS_URL = /url\(([^)]*)\)/gi;
// A fragment of the document, or embedded raster data (an embedded SVG could reference again).
const SELF_CONTAINED = /^(?:#|data:image\/(?:png|jpeg|gif|webp)[;,])/i;
const DATA_URI = /^data:[^;,]*(;base64)?,(.*)$/is;

/**
 * Refuses (ImagingError) an SVG that is too large or not self-contained; returns the raster
 * images it embeds, which librsvg would decode whole: the caller measures them.
 */
export function checkSvg(data: Buffer): Buffer[] {
  if (data.length > MAX_SVG_BYTES) {
    throw new ImagingError('too-large', `SVG images over ${MAX_SVG_BYTES / 1024 ** 2} MiB are not converted`);
  }
  const text = data.toString('utf8');
  for (const [pattern, what] of FORBIDDEN) {
    if (pattern.test(text)) throw new ImagingError('unsafe-svg', `SVG images with ${what} are not converted`);
  }
  const embedded: Buffer[] = [];
  for (const pattern of [HREF, CSS_URL]) {
    for (const match of text.matchAll(pattern)) {
      const target = (match[1] ?? match[2] ?? '').trim().replace(/^["']|["']$/g, '');
      if (!SELF_CONTAINED.test(target)) {
        throw new ImagingError('unsafe-svg', 'SVG images referring outside themselves are not converted');
      }
      if (!target.startsWith('#')) embedded.push(dataOf(target));
    }
  }
  return embedded;
}

function dataOf(uri: string): Buffer {
  const [, base64, payload = ''] = DATA_URI.exec(uri) ?? [];
  if (base64) return Buffer.from(payload, 'base64');
  try {
    return Buffer.from(decodeURIComponent(payload), 'latin1');
  } catch {
    throw new ImagingError('invalid-image', 'the SVG embeds an image with bad percent-encoding');
  }
}
