import { describe, expect, it } from 'vitest';
import { accepts, negotiateFormat, passesThrough, sniffFormat } from './formats';

const bytes = (...parts: Array<string | number[]>) =>
  Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'latin1') : Buffer.from(p))));

describe('sniffFormat', () => {
  it.each([
    [bytes([0xff, 0xd8, 0xff, 0xe0]), 'jpeg'],
    [bytes('\x89PNG\r\n\x1a\n'), 'png'],
    [bytes('GIF89a'), 'gif'],
    [bytes('RIFF\0\0\0\0WEBPVP8 '), 'webp'],
    [bytes('II*\0'), 'tiff'],
    [bytes('BM\0\0'), 'bmp'],
    [bytes([0, 0, 0, 0x18], 'ftypavif', [0, 0, 0, 0], 'mif1miaf'), 'avif'],
    [bytes([0, 0, 0, 0x18], 'ftypmif1', [0, 0, 0, 0], 'mif1avif'), 'avif'],
    [bytes([0, 0, 0, 0x18], 'ftypheic', [0, 0, 0, 0], 'mif1heic'), 'heic'],
    [bytes([0, 0, 0, 0x14], 'ftypisom', [0, 0, 0, 0], 'mp41'), 'unknown'],
    [bytes('<svg xmlns="http://www.w3.org/2000/svg"/>'), 'unknown'],
    [bytes(''), 'unknown'],
  ])('%#: %s', (data, format) => {
    expect(sniffFormat(data)).toBe(format);
  });
});

describe('through', () => {
  it('passes listed formats and, for auto, what cannot be converted', () => {
    expect(passesThrough(['jpg'], 'jpeg')).toBe(true);
    expect(passesThrough(['jpg'], 'png')).toBe(false);
    expect(passesThrough(['auto'], 'heic')).toBe(true);
    expect(passesThrough(['auto'], 'unknown')).toBe(true);
    expect(passesThrough(['auto'], 'webp')).toBe(false);
    expect(passesThrough(undefined, 'jpeg')).toBe(false);
  });
});

describe('negotiateFormat', () => {
  it('keeps the input format for auto', () => {
    expect(negotiateFormat(undefined, 'png', null, true)).toEqual({ format: 'png', varyAccept: false });
    expect(negotiateFormat(undefined, 'tiff', null, false)).toEqual({ format: 'jpeg', varyAccept: false });
    expect(negotiateFormat(undefined, 'tiff', null, true)).toEqual({ format: 'png', varyAccept: false });
    expect(negotiateFormat('avif', 'png', null, true)).toEqual({ format: 'avif', varyAccept: false });
  });

  it('sends webp or avif only to clients that accept them', () => {
    const browser = 'image/avif,image/webp,image/apng,image/*,*/*;q=0.8';
    expect(negotiateFormat('webp:jpg', 'png', browser, true)).toEqual({ format: 'webp', varyAccept: true });
    expect(negotiateFormat('webp:jpg', 'png', '*/*', true)).toEqual({ format: 'jpeg', varyAccept: true });
    expect(negotiateFormat('avif:auto', 'gif', browser, false)).toEqual({ format: 'avif', varyAccept: true });
    expect(negotiateFormat('avif:auto', 'gif', 'image/webp', false)).toEqual({
      format: 'gif',
      varyAccept: true,
    });
    expect(negotiateFormat('webp:png', 'jpeg', undefined, false)).toEqual({
      format: 'png',
      varyAccept: true,
    });
  });

  it('reads q values and ignores wildcards', () => {
    expect(accepts('image/webp', 'image/webp')).toBe(true);
    expect(accepts('IMAGE/WEBP ; q=0.5', 'image/webp')).toBe(true);
    expect(accepts('image/webp;q=0', 'image/webp')).toBe(false);
    expect(accepts('image/*', 'image/webp')).toBe(false);
    expect(accepts(null, 'image/webp')).toBe(false);
  });
});
