import fc from 'fast-check';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { readJpegHeader } from './jpeg-header';

const photo = (width: number, height: number) =>
  sharp({
    create: {
      width,
      height,
      channels: 3,
      background: '#808080',
      noise: { type: 'gaussian', mean: 128, sigma: 40 },
    },
  });

/** What sharp (libvips, libexif) reads of the same file. */
async function sharpHeader(data: Buffer) {
  const meta = await sharp(data).metadata();
  return { width: meta.width, height: meta.height, orientation: meta.orientation ?? 1 };
}

/** A JPEG with an EXIF block inserted after its SOI: a TIFF directory of `entries` in `order`. */
function withExif(
  jpeg: Buffer,
  order: 'II' | 'MM',
  entries: { tag: number; type: number; count: number; value: number }[],
) {
  const big = order === 'MM';
  const tiff = Buffer.alloc(8 + 2 + entries.length * 12 + 4);
  tiff.write(order, 0, 'latin1');
  const u16 = (value: number, at: number) =>
    big ? tiff.writeUInt16BE(value, at) : tiff.writeUInt16LE(value, at);
  const u32 = (value: number, at: number) =>
    big ? tiff.writeUInt32BE(value, at) : tiff.writeUInt32LE(value, at);
  u16(42, 2);
  u32(8, 4);
  u16(entries.length, 8);
  entries.forEach(({ tag, type, count, value }, index) => {
    const at = 10 + index * 12;
    u16(tag, at);
    u16(type, at + 2);
    u32(count, at + 4);
    u16(value, at + 8);
  });
  const body = Buffer.concat([Buffer.from('Exif\0\0'), tiff]);
  const segment = Buffer.alloc(4);
  segment.writeUInt16BE(0xffe1, 0);
  segment.writeUInt16BE(body.length + 2, 2);
  return Buffer.concat([jpeg.subarray(0, 2), segment, body, jpeg.subarray(2)]);
}

const ORIENTATION = (value: number) => ({ tag: 0x0112, type: 3, count: 1, value });

describe('readJpegHeader', () => {
  it.each([
    ['baseline', { progressive: false }],
    ['progressive', { progressive: true }],
    ['4:4:4, optimised Huffman tables', { chromaSubsampling: '4:4:4', optimiseCoding: true }],
  ])('reads a %s JPEG as sharp does', async (_name, options) => {
    const jpeg = await photo(123, 45).jpeg(options).toBuffer();
    expect(readJpegHeader(jpeg)).toEqual(await sharpHeader(jpeg));
  });

  it('reads greyscale and CMYK JPEGs as sharp does', async () => {
    for (const jpeg of [
      await photo(64, 48).greyscale().jpeg().toBuffer(),
      await photo(64, 48).toColourspace('cmyk').jpeg().toBuffer(),
    ]) {
      expect(readJpegHeader(jpeg)).toEqual(await sharpHeader(jpeg));
    }
  });

  it('reads every EXIF orientation libvips writes, and one a camera writes big-endian', async () => {
    for (let orientation = 1; orientation <= 8; orientation++) {
      const jpeg = await photo(40, 30).jpeg().withMetadata({ orientation }).toBuffer();
      expect(readJpegHeader(jpeg)).toEqual({ width: 40, height: 30, orientation });
      expect(await sharpHeader(jpeg)).toEqual({ width: 40, height: 30, orientation });
    }
    const plain = await photo(40, 30).jpeg().toBuffer();
    for (const order of ['MM', 'II'] as const) {
      const jpeg = withExif(plain, order, [{ tag: 0x010f, type: 2, count: 4, value: 0 }, ORIENTATION(6)]);
      expect(readJpegHeader(jpeg)).toEqual({ width: 40, height: 30, orientation: 6 });
      expect(await sharpHeader(jpeg)).toEqual({ width: 40, height: 30, orientation: 6 });
    }
  });

  it('leaves to sharp what it is unsure of', async () => {
    const plain = await photo(40, 30).jpeg().toBuffer();
    const sosAt = plain.indexOf(Buffer.from([0xff, 0xda]));
    const sofAt = plain.indexOf(Buffer.from([0xff, 0xc0]));
    for (const unsure of [
      Buffer.alloc(0),
      Buffer.from('GIF89a'),
      plain.subarray(0, sofAt + 5), // cut inside the frame header
      Buffer.concat([plain.subarray(0, 2), Buffer.from([0x00, 0x01]), plain.subarray(2)]), // bytes between markers
      withExif(withExif(plain, 'II', [ORIENTATION(3)]), 'MM', [ORIENTATION(6)]), // two EXIF blocks
      withExif(plain, 'II', [ORIENTATION(9)]),
      withExif(plain, 'II', [{ ...ORIENTATION(6), type: 4 }]), // a LONG, not a SHORT
      // The scan before any frame header.
      Buffer.concat([plain.subarray(0, sofAt), plain.subarray(sosAt)]),
    ]) {
      expect(readJpegHeader(unsure)).toBeNull();
    }
  });

  it('never differs from sharp on a damaged header it does read', async () => {
    const jpeg = await photo(321, 123).jpeg().withMetadata({ orientation: 5 }).toBuffer();
    const headerEnd = jpeg.indexOf(Buffer.from([0xff, 0xda]));
    const expected = await sharpHeader(jpeg);
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ at: fc.nat(headerEnd - 1), byte: fc.nat(255) }), { minLength: 1, maxLength: 4 }),
        async (damage) => {
          const damaged = Buffer.from(jpeg);
          for (const { at, byte } of damage) damaged[at] = byte;
          const read = readJpegHeader(damaged);
          if (!read) return;
          const bySharp = await sharpHeader(damaged).catch(() => null);
          // What sharp cannot open, the pipeline refuses anyway; what it can, reads alike.
          if (bySharp) expect(read).toEqual(bySharp);
          else expect(read.width * read.height).toBeGreaterThan(0);
        },
      ),
      { seed: 21, numRuns: 400 },
    );
    expect(readJpegHeader(jpeg)).toEqual(expected);
  });

  it('reads a file of a thousand tiny segments no further than its limit', () => {
    const filler = Buffer.alloc(4 * 1000);
    for (let at = 0; at < filler.length; at += 4) filler.set([0xff, 0xfe, 0x00, 0x02], at); // empty comments
    expect(readJpegHeader(Buffer.concat([Buffer.from([0xff, 0xd8]), filler]))).toBeNull();
  });
});
