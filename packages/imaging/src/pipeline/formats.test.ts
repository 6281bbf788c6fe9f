import { describe, expect, it } from 'vitest';
import { accepts, chainChoice, inputFormat, negotiateFormat, passesThrough, sniffFormat } from './formats';

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
    [bytes('<svg xmlns="http://www.w3.org/2000/svg"/>'), 'svg'],
    [
      bytes(
        '\xef\xbb\xbf<?xml version="1.0"?>\n<!-- drawn -->\n<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "x.dtd">\n<svg>',
      ),
      'svg',
    ],
    [bytes('<!DOCTYPE svg [<!ENTITY e "x">]><svg>'), 'svg'],
    [bytes('<html><svg></svg></html>'), 'unknown'],
    [bytes('<svgfoo/>'), 'unknown'],
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

  it('treats an SVG its origin does not allow as unrecognised data', () => {
    const svg = bytes('<svg xmlns="http://www.w3.org/2000/svg"/>');
    expect(inputFormat(svg, false)).toBe('unknown');
    expect(inputFormat(svg, true)).toBe('svg');
    expect(passesThrough(['auto'], inputFormat(svg, false))).toBe(true);
    expect(passesThrough(['auto'], inputFormat(svg, true))).toBe(false);
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

  it('walks a fallback chain: the first element Accept names, else the last', () => {
    const avif = 'image/avif,image/webp,*/*';
    const webp = 'image/webp,*/*';
    expect(negotiateFormat('avif:webp:jpg', 'png', avif, false)).toEqual({
      format: 'avif',
      varyAccept: true,
    });
    expect(negotiateFormat('avif:webp:jpg', 'png', webp, false)).toEqual({
      format: 'webp',
      varyAccept: true,
    });
    expect(negotiateFormat('avif:webp:jpg', 'png', '*/*', false)).toEqual({
      format: 'jpeg',
      varyAccept: true,
    });
    expect(negotiateFormat('avif:webp:auto', 'gif', 'image/png', false)).toEqual({
      format: 'gif',
      varyAccept: true,
    });
    // The last element is unconditional even when Accept refuses it.
    expect(negotiateFormat('webp:png', 'jpeg', 'image/png;q=0', true).format).toBe('png');
    // Any element may be conditional: explicitly named with q > 0.
    expect(negotiateFormat('png:avif:jpg', 'jpeg', 'image/avif, image/png;q=0', false).format).toBe('avif');
    expect(chainChoice('avif:webp:jpg', avif)).toBe(0);
    expect(chainChoice('avif:webp:jpg', webp)).toBe(1);
    expect(chainChoice('avif:webp:jpg', undefined)).toBe(2);
    expect(chainChoice('webp', avif)).toBeNull();
    expect(chainChoice(undefined, avif)).toBeNull();
  });

  it('turns inputs no encoder writes into PNG or JPEG', () => {
    expect(negotiateFormat(undefined, 'svg', null, true).format).toBe('png');
    expect(negotiateFormat(undefined, 'heic', null, false).format).toBe('jpeg');
  });

  it('reads q values and ignores wildcards', () => {
    expect(accepts('image/webp', 'image/webp')).toBe(true);
    expect(accepts('IMAGE/WEBP ; q=0.5', 'image/webp')).toBe(true);
    expect(accepts('image/webp;q=0', 'image/webp')).toBe(false);
    expect(accepts('image/*', 'image/webp')).toBe(false);
    expect(accepts(null, 'image/webp')).toBe(false);
  });
});
