// A JPEG's size and EXIF orientation read from its markers in JavaScript, so that a conversion
// need not ask libvips for them first: sharp's metadata() costs about 0.3 ms of CPU per image
// whatever its size (a round trip through the thread pool, libvips opening the image, libexif),
// which is a percent of a 6 MP miss and most of a small one's own cost. imgproxy reads headers
// itself for the same reason. Anything this reader is unsure of answers null, and the caller
// asks sharp: it never has to be right about a file libvips would read otherwise.

import type { Orientation } from '../grammar';

export interface JpegHeader {
  width: number;
  height: number;
  orientation: Orientation;
}

/**
 * Markers read before giving up: a camera's JPEG has about ten before its frame header, and
 * each step is a few nanoseconds, so a file made of tiny segments costs no more than a real one.
 */
const MAX_SEGMENTS = 64;
/** Start-of-frame markers: every coding (baseline to lossless, Huffman or arithmetic) but DHT, JPG and DAC. */
const START_OF_FRAME = new Set([
  0xc0, 0xc1, 0xc2, 0xc3, 0xc5, 0xc6, 0xc7, 0xc9, 0xca, 0xcb, 0xcd, 0xce, 0xcf,
]);
const START_OF_SCAN = 0xda;
const APP1 = 0xe1;
const EXIF = Buffer.from('Exif\0\0');
const ORIENTATION_TAG = 0x0112;
const SHORT = 3;

/**
 * The width, height and orientation of a JPEG from its frame header and its EXIF block, or null
 * when the markers before the frame are not plainly well formed (libvips decides then).
 */
export function readJpegHeader(data: Buffer): JpegHeader | null {
  if (data.length < 4 || data[0] !== 0xff || data[1] !== 0xd8) return null;
  let at = 2;
  let orientation: Orientation | null | undefined;
  for (let segment = 0; segment < MAX_SEGMENTS; segment++) {
    if (at + 4 > data.length || data[at] !== 0xff) return null;
    const marker = data[at + 1]!;
    // Fill bytes (0xff) may pad between markers.
    if (marker === 0xff) {
      at++;
      continue;
    }
    const length = data.readUInt16BE(at + 2);
    const body = at + 4;
    const end = at + 2 + length;
    if (length < 2 || end > data.length) return null;
    if (START_OF_FRAME.has(marker)) {
      // Precision (1 byte), then height and width; a height of 0 is given later (DNL).
      if (length < 7) return null;
      const height = data.readUInt16BE(body + 1);
      const width = data.readUInt16BE(body + 3);
      if (width === 0 || height === 0 || orientation === null) return null;
      return { width, height, orientation: orientation ?? 1 };
    }
    if (marker === START_OF_SCAN) return null;
    if (marker === APP1 && data.subarray(body, body + EXIF.length).equals(EXIF)) {
      // Which of two EXIF blocks counts is libvips' choice: such a file is left to it.
      if (orientation !== undefined) return null;
      orientation = exifOrientation(data.subarray(body + EXIF.length, end));
    }
    at = end;
  }
  return null;
}

/**
 * The orientation tag of an EXIF block's first directory (TIFF layout, either byte order): 1
 * when it has none, null when the block or the tag is not as the standard has it.
 */
function exifOrientation(tiff: Buffer): Orientation | null {
  if (tiff.length < 8) return null;
  const order = tiff.toString('latin1', 0, 2);
  if (order !== 'II' && order !== 'MM') return null;
  const big = order === 'MM';
  const u16 = (offset: number) => (big ? tiff.readUInt16BE(offset) : tiff.readUInt16LE(offset));
  const u32 = (offset: number) => (big ? tiff.readUInt32BE(offset) : tiff.readUInt32LE(offset));
  if (u16(2) !== 42) return null;
  const directory = u32(4);
  if (directory < 8 || directory + 2 > tiff.length) return null;
  const entries = u16(directory);
  if (directory + 2 + entries * 12 > tiff.length) return null;
  for (let entry = 0; entry < entries; entry++) {
    const at = directory + 2 + entry * 12;
    if (u16(at) !== ORIENTATION_TAG) continue;
    if (u16(at + 2) !== SHORT || u32(at + 4) !== 1) return null;
    const value = u16(at + 8);
    return value >= 1 && value <= 8 ? (value as Orientation) : null;
  }
  return 1;
}
