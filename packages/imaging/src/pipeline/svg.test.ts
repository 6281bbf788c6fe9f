import { describe, expect, it } from 'vitest';
import { ImagingError } from './errors';
import { checkSvg, MAX_SVG_BYTES } from './svg';

const svg = (body: string, head = '') =>
  Buffer.from(
    `${head}<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">${body}</svg>`,
  );

function refusal(data: Buffer): ImagingError {
  try {
    checkSvg(data);
  } catch (error) {
    expect(error).toBeInstanceOf(ImagingError);
    return error as ImagingError;
  }
  throw new Error('accepted');
}

describe('checkSvg', () => {
  it('accepts self-contained drawings: fragments and embedded raster images', () => {
    const gradient =
      '<defs><linearGradient id="g"><stop offset="0" stop-color="red"/></linearGradient></defs>' +
      '<rect width="10" height="10" fill="url(#g)" style="stroke: url( \'#g\' )"/><use href="#g"/>' +
      '<use xlink:href = "#g"/><image href="data:image/png;base64,iVBORw0KGgo="/>';
    // The embedded images come back for measuring, decoded.
    expect(checkSvg(svg(gradient))).toEqual([Buffer.from('iVBORw0KGgo=', 'base64')]);
    expect(checkSvg(svg(`<rect style="fill: url('data:image/gif,GIF89a%00')"/>`))).toEqual([
      Buffer.from('GIF89a\0', 'latin1'),
    ]);
    const doctype = '<?xml version="1.0"?><!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "svg11.dtd">';
    expect(() => checkSvg(svg('<circle r="1"/>', doctype))).not.toThrow();
  });

  it.each([
    ['an external image', '<image href="http://169.254.169.254/latest/meta-data"/>'],
    ['an external xlink:href', "<image xlink:href='https://example.com/a.png'/>"],
    ['a local file', '<image href="file:///etc/passwd"/>'],
    ['a relative reference', '<use href="other.svg#a"/>'],
    ['a reference spelt with a character reference', '<image href="&#104;ttp://x/a.png"/>'],
    ['an embedded SVG (which could refer again)', '<image href="data:image/svg+xml;base64,PHN2Zz4="/>'],
    ['XInclude', '<xi:include xmlns:xi="http://www.w3.org/2001/XInclude" href="/etc/passwd" parse="text"/>'],
    ['a CSS url()', '<rect style="fill: url(http://example.com/p.svg#p)"/>'],
    ['an unquoted CSS url() in a stylesheet', '<style>rect { fill: url(/p.svg#p) }</style>'],
    ['a CSS url() with odd quoting', '<rect style="fill: url(\'http://x/p.svg#p)"/>'],
  ])('refuses %s', (_, body) => {
    expect(refusal(svg(body))).toMatchObject({ code: 'unsafe-svg', status: 422 });
  });

  it.each([
    ['entities', '', '<!DOCTYPE svg [<!ENTITY a "aaaaaaaaaa">]>'],
    ['parameter entities', '', '<!DOCTYPE svg [ <!ENTITY % p SYSTEM "http://x/p.dtd"> %p; ]>'],
    ['an internal subset', '', '<!DOCTYPE svg [ <!ATTLIST svg a CDATA "x"> ]>'],
    ['scripts', '<script>alert(1)</script>', ''],
    ['namespaced scripts', '<svg:script xmlns:svg="http://www.w3.org/2000/svg"/>', ''],
    ['foreignObject', '<foreignObject><div xmlns="http://www.w3.org/1999/xhtml">x</div></foreignObject>', ''],
    ['CSS imports', '<style>@import "https://example.com/a.css";</style>', ''],
    ['CSS escapes', '<style>rect { fill: \\75 rl(http://x/p.svg#p) }</style>', ''],
  ])('refuses %s', (_, body, head) => {
    expect(refusal(svg(body, head))).toMatchObject({ code: 'unsafe-svg' });
  });

  it('refuses documents over the size bound before reading them', () => {
    const padding = `<!--${' '.repeat(MAX_SVG_BYTES)}-->`;
    expect(refusal(svg(padding))).toMatchObject({ code: 'too-large', status: 422 });
    expect(() => checkSvg(svg(padding.slice(0, MAX_SVG_BYTES - 200)))).not.toThrow();
  });
});
