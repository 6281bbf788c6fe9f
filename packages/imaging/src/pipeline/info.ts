// `f=json` and `f=blurhash`: facts about an image instead of the image. Every figure of the
// result is read back from the bytes the same URL without `f=json` sends (converted or passed
// through), so the answer cannot drift from the variant it describes.

import { encode } from 'blurhash';
import sharp from 'sharp';
import { defaults, type InfoFormat, type ParsedParams } from '../grammar';
import type { Budget } from './budget';
import { CONTENT_TYPES, type DecodableFormat, type InputFormat, type OutputFormat } from './formats';
import { colour, openImage, runTimed } from './render';

/** One image as a page lays it out: width and height with its EXIF orientation applied. */
export interface ImageFacts {
  width: number;
  height: number;
  format: InputFormat | OutputFormat;
  contentType: string;
  bytes: number;
  hasAlpha: boolean;
  /** Pages of an animation; 1 for a still image. */
  frames: number;
  /** The EXIF orientation tag the file carries (1: none, or upright). */
  orientation: number;
}

/** The `f=json` answer: the result at the top level, the origin's image under `original`. */
export interface ImageInfo extends ImageFacts {
  /** sharp's most frequent colour (4096-bin histogram), `#rrggbb`. */
  dominantColor: string;
  blurhash: string;
  original: ImageFacts;
}

/** What the URL sends, as the conversion made it. */
export interface Described {
  data: Buffer;
  format: InputFormat | OutputFormat;
  contentType: string;
  width: number;
  height: number;
  /** The same pixels as an image sharp reads: `data` itself, or a video's first frame as a still. */
  still: Buffer;
}

export interface InfoAnswer {
  data: Buffer;
  contentType: string;
  info: ImageInfo;
}

/** The statistics need no more pixels than this per side; decoding stays cheap. */
const STATS_SIDE = 256;
/** BlurHash averages over its components anyway: 32 px per side is the usual input. */
const HASH_SIDE = 32;

const CONTENT_TYPE: Record<InfoFormat, string> = {
  json: 'application/json',
  blurhash: 'text/plain; charset=utf-8',
};

/**
 * Describes `result` (what the URL sends) and `source` (the origin's bytes). Transparent areas
 * count as the background `b` for the colour and the hash: BlurHash has no alpha.
 */
export async function describeImage(
  info: InfoFormat,
  source: Buffer,
  result: Described,
  params: ParsedParams,
  budget: Budget,
  limits: { maxInputPixels: number; allowSvg: boolean },
): Promise<InfoAnswer> {
  const { maxInputPixels } = limits;
  const original = await factsOf(source, maxInputPixels, limits.allowSvg);
  // Passed through by `through`, the result is the source.
  const still = result.still === source ? original : await factsOf(result.still, maxInputPixels, false);
  const described: ImageFacts =
    result.still === result.data
      ? still
      : // A video keeps every frame of the animation; sharp reads none of its header.
        {
          width: result.width,
          height: result.height,
          format: result.format,
          contentType: result.contentType,
          bytes: result.data.length,
          hasAlpha: false,
          frames: original.frames,
          orientation: 1,
        };
  budget.chargeInfo({ format: still.format, size: still });

  const small = await runTimed(
    sharp(result.still, { limitInputPixels: maxInputPixels, failOn: 'error' })
      .autoOrient()
      .resize(STATS_SIDE, STATS_SIDE, { fit: 'inside', withoutEnlargement: true })
      .flatten({ background: colour(params.b ?? defaults.background) }),
    budget,
    (image) => image.raw().toBuffer({ resolveWithObject: true }),
  );
  const raw = { raw: { width: small.info.width, height: small.info.height, channels: small.info.channels } };
  const { dominant } = await sharp(small.data, raw).stats();
  const hashInput = await sharp(small.data, raw)
    .resize(HASH_SIDE, HASH_SIDE, { fit: 'inside' })
    .ensureAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  const { width, height } = hashInput.info;
  // More components along the longer side, as BlurHash's authors advise.
  const [across, down] = width >= height ? [4, 3] : [3, 4];
  const blurhash = encode(new Uint8ClampedArray(hashInput.data), width, height, across, down);

  const answer: ImageInfo = { ...described, dominantColor: hex(dominant), blurhash, original };
  const text = info === 'json' ? JSON.stringify(answer) : blurhash;
  return { data: Buffer.from(text), contentType: CONTENT_TYPE[info], info: answer };
}

/** From the header alone (openImage refuses formats that must not reach a decoder). */
async function factsOf(
  data: Buffer,
  maxInputPixels: number,
  allowSvg: boolean,
): Promise<ImageFacts & { format: DecodableFormat }> {
  const opened = await openImage(data, maxInputPixels, { allowed: allowSvg });
  const meta = await opened.image.metadata();
  return {
    width: meta.autoOrient.width,
    height: meta.autoOrient.height,
    format: opened.format,
    contentType: CONTENT_TYPES[opened.format],
    bytes: data.length,
    hasAlpha: opened.hasAlpha,
    frames: meta.pages ?? 1,
    orientation: opened.orientation,
  };
}

function hex({ r, g, b }: { r: number; g: number; b: number }): string {
  return `#${[r, g, b].map((v) => v.toString(16).padStart(2, '0')).join('')}`;
}
