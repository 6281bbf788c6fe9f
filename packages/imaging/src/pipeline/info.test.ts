import { decode } from 'blurhash';
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ImageInfo } from './info';
import { canvas, convert, noise, noLimits, stackedFrames, transparent, type Rgb } from './test-fixtures';

let redPhoto: Buffer; // 800x600 JPEG: red, with a blue band across the bottom fifth
let badge: Buffer; // 300x200 PNG: transparent, a green square in the middle
let flashing: Buffer; // 160x120 GIF: 4 frames, red first, then green, blue and yellow

/** The pipeline on bare parameters (`w=200,f=json`), within `maxCost` when not 0. */
const run = (source: Buffer, parameters: string, maxCost = 0) =>
  convert(`/${parameters}/a`, source, { allowText: false, limits: { ...noLimits, maxCost } });

async function info(source: Buffer, parameters: string): Promise<ImageInfo> {
  const result = await run(source, parameters);
  expect(result.contentType).toBe('application/json');
  return JSON.parse(result.data.toString()) as ImageInfo;
}

/** sRGB 0..255 to linear light 0..1, where BlurHash averages. */
const linear = (v: number) => (v / 255 <= 0.04045 ? v / 255 / 12.92 : ((v / 255 + 0.055) / 1.055) ** 2.4);

/** Mean red, green and blue of pixels, in linear light. */
function meanColour(pixels: Uint8ClampedArray | Buffer, channels: number): number[] {
  const sums = [0, 0, 0];
  for (let i = 0; i < pixels.length; i += channels) {
    for (let c = 0; c < 3; c++) sums[c]! += linear(pixels[i + c]!);
  }
  return sums.map((sum) => sum / (pixels.length / channels));
}

beforeAll(async () => {
  redPhoto = await canvas(800, 600, '#d01010', [
    { left: 0, top: 480, width: 800, height: 120, colour: '#1020c0' },
  ])
    .jpeg({ quality: 90 })
    .toBuffer();
  badge = await canvas(300, 200, transparent, [
    { left: 100, top: 50, width: 100, height: 100, colour: '#00c000' },
  ])
    .png()
    .toBuffer();
  const colours: Rgb[] = [
    [220, 30, 30],
    [30, 200, 30],
    [30, 30, 220],
    [230, 210, 30],
  ];
  flashing = await stackedFrames(colours, 160, 120)
    .gif({ delay: colours.map(() => 100), loop: 0 })
    .toBuffer();
});

describe('f=json', () => {
  it('gives the result of the other parameters and the original, with their own bytes', async () => {
    const described = await info(redPhoto, 'w=200,f=webp,f=json');
    const variant = await run(redPhoto, 'w=200,f=webp');
    expect(described).toMatchObject({
      width: 200,
      height: 150,
      format: 'webp',
      contentType: 'image/webp',
      bytes: variant.data.length,
      hasAlpha: false,
      frames: 1,
      orientation: 1,
      original: {
        width: 800,
        height: 600,
        format: 'jpeg',
        contentType: 'image/jpeg',
        bytes: redPhoto.length,
        hasAlpha: false,
        frames: 1,
        orientation: 1,
      },
    });
  });

  it('describes the input format when f names only the answer', async () => {
    const described = await info(redPhoto, 'w=400,f=json');
    expect(described).toMatchObject({ width: 400, height: 300, format: 'jpeg' });
  });

  it('finds a red dominant colour in a mostly red image', async () => {
    const { dominantColor } = await info(redPhoto, 'f=json');
    expect(dominantColor).toMatch(/^#[0-9a-f]{6}$/);
    const [r, g, b] = [1, 3, 5].map((at) => parseInt(dominantColor.slice(at, at + 2), 16));
    expect(r).toBeGreaterThan(180);
    expect(g).toBeLessThan(60);
    expect(b).toBeLessThan(60);
  });

  it('gives a BlurHash that decodes to the colours of the image', async () => {
    const { blurhash, width, height } = await info(redPhoto, 'w=400,f=json');
    const decoded = decode(blurhash, 32, 24);
    const image = await sharp(await (await run(redPhoto, 'w=400')).data)
      .resize(32, 24)
      .raw()
      .toBuffer();
    const expected = meanColour(image, 3);
    meanColour(decoded, 4).forEach((channel, i) =>
      expect(Math.abs(channel - expected[i]!)).toBeLessThan(0.02),
    );
    // The blue band at the bottom survives: the hash is not just the average.
    const bottom = decode(blurhash, 4, 3).subarray(2 * 4 * 4);
    expect(meanColour(bottom, 4)[2]).toBeGreaterThan(
      meanColour(decode(blurhash, 4, 3).subarray(0, 16), 4)[2]!,
    );
    expect(width / height).toBeCloseTo(4 / 3);
  });

  it('reports alpha and counts transparent areas as the background', async () => {
    const described = await info(badge, 'f=json');
    expect(described).toMatchObject({ width: 300, height: 200, format: 'png', hasAlpha: true });
    // Mostly transparent over the default white background: white dominates.
    expect(described.dominantColor).toBe('#f8f8f8');
    const onBlack = await info(badge, 'b=000000,f=json');
    expect(onBlack.dominantColor).toBe('#080808');
  });

  it('describes an image passed through by `through` as the origin has it', async () => {
    const described = await info(redPhoto, 'w=100,through=jpg,f=json');
    expect(described).toMatchObject({ width: 800, height: 600, bytes: redPhoto.length });
  });

  it('applies the EXIF orientation to width and height and reports the tag', async () => {
    const rotated = await sharp(redPhoto).withMetadata({ orientation: 6 }).jpeg().toBuffer();
    const described = await info(rotated, 's=2,f=json');
    expect(described.original).toMatchObject({ width: 600, height: 800, orientation: 6 });
  });

  it('counts the frames of an animation, and takes the colour and the hash from its first frame', async () => {
    const described = await info(flashing, 'w=80,f=json');
    expect(described).toMatchObject({
      width: 80,
      height: 60,
      format: 'gif',
      frames: 4,
      original: { frames: 4 },
    });
    expect(described.dominantColor).toMatch(/^#[d-f][0-9a-f][0-3][0-9a-f][0-3][0-9a-f]$/);
  });

  it('describes an MP4 result from the conversion, its colours from the first frame', async () => {
    const video = await run(flashing, 'w=80,f=mp4');
    const described = await info(flashing, 'w=80,f=mp4,f=json');
    expect(described).toMatchObject({
      width: 80,
      height: 60,
      format: 'mp4',
      contentType: 'video/mp4',
      hasAlpha: false,
      frames: 4,
      orientation: 1,
      original: { format: 'gif', frames: 4, bytes: flashing.length },
    });
    expect(described.bytes).toBe(video.data.length);
    expect(described.dominantColor).toMatch(/^#[d-f][0-9a-f][0-3][0-9a-f][0-3][0-9a-f]$/);
  });

  it('is charged against the transform budget', async () => {
    const cost = (await run(redPhoto, 'w=200,f=webp')).cost;
    const described = await run(redPhoto, 'w=200,f=webp,f=json');
    expect(described.cost).toBeGreaterThan(cost);
    await expect(run(redPhoto, 'w=200,f=webp,f=json', cost + 0.5)).rejects.toMatchObject({
      code: 'too-costly',
    });
  });
});

describe('placeholders', () => {
  it('makes the documented LQIP recipe a few hundred bytes, even of a detailed photograph', async () => {
    const noisy = await noise(1600, 1200, 60).jpeg({ quality: 90 }).toBuffer();
    const lqip = await run(noisy, 'w=32,f=webp,q=30,blur=2x2');
    expect([lqip.width, lqip.height, lqip.contentType]).toEqual([32, 24, 'image/webp']);
    expect(lqip.data.length).toBeLessThan(600);
  });
});

describe('f=blurhash', () => {
  it('answers the hash alone as text', async () => {
    const hash = await run(redPhoto, 'w=400,f=blurhash');
    expect(hash.contentType).toBe('text/plain; charset=utf-8');
    expect(hash.data.toString()).toBe((await info(redPhoto, 'w=400,f=json')).blurhash);
  });
});
