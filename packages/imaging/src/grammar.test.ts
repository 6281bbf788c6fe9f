import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  formatPath,
  parseParams,
  parsePath,
  printParams,
  type Clip,
  type Font,
  type OverlayParams,
  type ParsedParams,
  type Rgba,
  type TextParams,
  type ThroughFormat,
} from './grammar';

function params(path: string): ParsedParams {
  const parsed = parsePath(path);
  if (!parsed.ok) throw new Error(parsed.reason);
  return parsed.params;
}

function reason(path: string): string {
  const parsed = parsePath(path);
  if (parsed.ok) throw new Error(`${path} parsed`);
  return parsed.reason;
}

describe('parsePath', () => {
  it('splits prefix, parameters and image path', () => {
    expect(parsePath('/c/w=200,h=100/images/1.jpg')).toEqual({
      ok: true,
      prefix: 'c/',
      params: { w: 200, h: 100 },
      rawParams: [
        ['w', '200'],
        ['h', '100'],
      ],
      imagePath: '/images/1.jpg',
    });
    expect(parsePath('/c!/w=200/a.png')).toMatchObject({ ok: true, prefix: 'c!/', imagePath: '/a.png' });
    expect(parsePath('/w=200/a.png')).toMatchObject({ ok: true, prefix: '', imagePath: '/a.png' });
  });

  it('treats a first segment without "=" as part of the image path', () => {
    expect(parsePath('/images/1.jpg')).toEqual({
      ok: true,
      prefix: '',
      params: {},
      rawParams: [],
      imagePath: '/images/1.jpg',
    });
    expect(parsePath('/c/images/a=b.jpg')).toMatchObject({
      ok: true,
      params: {},
      imagePath: '/c/images/a=b.jpg',
    });
  });

  it('accepts %2C / %2c as separators, for srcset', () => {
    const expected = params('/w=400,l=(w=300%2fimages%2f1.png),f=webp:auto/bridge.jpg');
    expect(params('/w=400%2cl=(w=300%2fimages%2f1.png)%2cf=webp:auto/bridge.jpg')).toEqual(expected);
    expect(params('/w=400%2Cl=(w=300%2fimages%2f1.png)%2Cf=webp:auto/bridge.jpg')).toEqual(expected);
    expect(expected).toEqual({ w: 400, f: 'webp:auto', l: [{ w: 300, path: '/images/1.png' }] });
  });

  it('does not split inside parentheses', () => {
    expect(params('/l=(w=10,h=20/logo.png),l=(%2Fb.png)/a.jpg').l).toEqual([
      { w: 10, h: 20, path: '/logo.png' },
      { path: '/b.png' },
    ]);
    expect(params('/t=(size=30,text=a,b/c)/x.jpg').t).toEqual([{ size: 30, text: 'a,b/c' }]);
  });

  it('resolves aliases', () => {
    expect(params('/c=0:0:10:10,cr=0:0:0.5:0.5,r=6/a.jpg')).toEqual({
      oc: { unit: 'ratio', rect: { x1: 0, y1: 0, x2: 0.5, y2: 0.5 } },
      or: 6,
    });
    expect(params('/f=webp:jpeg/a.jpg')).toEqual({ f: 'webp:jpg' });
    expect(params('/l=(c=0:0:5:5,r=3%2Fo.png)/a.jpg').l).toEqual([
      { oc: { unit: 'px', rect: { x1: 0, y1: 0, x2: 5, y2: 5 } }, or: 3, path: '/o.png' },
    ]);
  });

  it('drops defaults and lets later keys override earlier ones', () => {
    expect(params('/a=1,b=ffffff,g=5,u=1,q=75,o=1,s=1,f=auto,dpr=1,ir=1,lossless=0,invert=0/x.jpg')).toEqual(
      {},
    );
    expect(params('/w=1,w=2,a=2,a=1/x.jpg')).toEqual({ w: 2 });
  });

  it('parses every parameter', () => {
    expect(
      params(
        '/w=1,h=2,a=3,b=112233aa,g=9,u=0,dpr=1.5,ic=10:20:0:0,ig=9,ocr=0:0:1:1,og=5,ir=auto,or=8,' +
          'f=avif:png,q=0,o=0,lossless=1,s=2,through=heic:jpg:jpg,unsharp=2x1.5+0.8+0.05,blur=3x2,' +
          'grayscale=10,sepia=20,brightness=0,contrast=1000,invert=1,expires=2030-01-02T03:04:05Z,sig=1.abc=/x.jpg',
      ),
    ).toEqual({
      w: 1,
      h: 2,
      a: 3,
      b: { r: 0x11, g: 0x22, b: 0x33, alpha: 0xaa },
      g: 9,
      u: 0,
      dpr: 1.5,
      ic: { unit: 'px', rect: { x1: 0, y1: 0, x2: 10, y2: 20 } },
      ig: 9,
      oc: { unit: 'ratio', rect: { x1: 0, y1: 0, x2: 1, y2: 1 } },
      og: 5,
      ir: 'auto',
      or: 8,
      f: 'avif:png',
      q: 0,
      o: 0,
      lossless: 1,
      s: 2,
      through: ['jpg', 'heic'],
      unsharp: { radius: 2, sigma: 1.5, gain: 0.8, threshold: 0.05 },
      blur: { radius: 3, sigma: 2 },
      grayscale: 10,
      sepia: 20,
      brightness: 0,
      contrast: 1000,
      invert: 1,
      expires: Date.UTC(2030, 0, 2, 3, 4, 5) / 1000,
      sig: '1.abc=',
    });
  });

  it('parses overlays and text overlays with their own parameters', () => {
    expect(
      params(
        '/l=(w=300,h=50,u=0,a=2,g=1,b=000000,x=-5,y=7,xr=0.25,yr=-0.5,lg=3,mask=alpha:1%2Fimg%2Fa%20b.png)/x.jpg',
      ).l,
    ).toEqual([
      {
        w: 300,
        h: 50,
        u: 0,
        a: 2,
        g: 1,
        b: { r: 0, g: 0, b: 0, alpha: 255 },
        x: -5,
        y: 7,
        xr: 0.25,
        yr: -0.5,
        lg: 3,
        mask: { type: 'alpha', keepOutside: true },
        path: '/img/a b.png',
      },
    ]);
    expect(
      params(
        '/t=(font=(Noto%20Serif%20CJK%20JP,instance=Bold,var=wght:700),size=48,f=ff0000,b=00000080,w=300,h=100,' +
          'linespacing=1.2,align=1,dir=2,wrap=2,ellipsize=1,justify=1,strike=1,x=1,y=2,lg=7,mask=black,' +
          'text=%E3%81%93%E3%82%93%E3%81%AB%E3%81%A1%E3%81%AF%2C%20world)/x.jpg',
      ).t,
    ).toEqual([
      {
        font: { name: 'Noto Serif CJK JP', instance: 'Bold', variations: [['wght', 700]] },
        size: 48,
        f: { r: 255, g: 0, b: 0, alpha: 255 },
        b: { r: 0, g: 0, b: 0, alpha: 128 },
        w: 300,
        h: 100,
        linespacing: 1.2,
        align: 1,
        dir: 2,
        wrap: 2,
        ellipsize: 1,
        justify: 1,
        strike: 1,
        x: 1,
        y: 2,
        lg: 7,
        mask: { type: 'black' },
        text: 'こんにちは, world',
      },
    ]);
  });

  it('keeps the first signature, as go-imageflux does', () => {
    expect(params('/sig=1.a,sig=1.b/x.jpg').sig).toBe('1.a');
  });

  it('refuses malformed lists with a short reason', () => {
    expect(reason('images/1.jpg')).toBe('path must start with "/"');
    expect(reason('/w=200')).toBe('missing image path after the parameters');
    expect(reason('/w=1,,h=2/x.jpg')).toBe('empty parameter');
    expect(reason('/w=1,h/x.jpg')).toBe('parameter "h" has no value');
    expect(reason('/zoom=2/x.jpg')).toBe('unknown parameter "zoom"');
    expect(reason('/__proto__=1/x.jpg')).toBe('unknown parameter "__proto__"');
    expect(reason('/l=(w=1/x.jpg')).toBe('l: unclosed "("');
    expect(reason('/w=1)/x.jpg')).toBe('w: unbalanced ")"');
    expect(reason('/expires=%E0%A4%A/x.jpg')).toBe('expires: bad percent-encoding');
    expect(reason('/l=w=1/x.jpg')).toBe('l: expected l=(...)');
    expect(reason('/l=(w=1)/x.jpg')).toBe('l: missing the overlay image path');
    expect(reason('/l=(zoom=1%2Fa.png)/x.jpg')).toBe('l: unknown parameter "zoom"');
    expect(reason('/t=(size=10)/x.jpg')).toBe('t: missing text=');
    expect(reason('/t=(text=)/x.jpg')).toBe('t: empty text');
    expect(reason('/t=(font=a%3Cb,text=x)/x.jpg')).toBe('t: font name has unsupported characters');
    expect(reason(`/${'l=(%2Fa.png),'.repeat(9)}/x.jpg`)).toBe('l: at most 8 overlays');
  });

  const outOfRange: Array<[string, string]> = [
    ['w=0', 'w: must be 1..65535'],
    ['w=65536', 'w: must be 1..65535'],
    ['h=-1', 'h: must be 1..65535'],
    ['w=1.5', 'w: expected an integer, got "1.5"'],
    ['a=4', 'a: must be 0..3'],
    ['b=fff', 'b: expected RRGGBB or RRGGBBAA'],
    ['b=gggggg', 'b: expected RRGGBB or RRGGBBAA'],
    ['g=0', 'g: must be 1..9'],
    ['g=10', 'g: must be 1..9'],
    ['u=2', 'u: expected 0 or 1'],
    ['dpr=0', 'dpr: must be above 0'],
    ['dpr=11', 'dpr: must be at most 10'],
    ['dpr=1e2', 'dpr: expected a number, got "1e2"'],
    ['ic=0:0:10', 'ic: expected x1:y1:x2:y2'],
    ['ic=0:0:0:10', 'ic: empty rectangle'],
    ['ic=0:0:99999:10', 'ic: must be -65535..65535'],
    ['icr=0:0:1.5:1', 'icr: must be at most 1'],
    ['ocr=-0.1:0:1:1', 'ocr: must be at least 0'],
    ['oc=a:0:1:1', 'oc: expected an integer, got "a"'],
    ['ig=0', 'ig: must be 1..9'],
    ['og=10', 'og: must be 1..9'],
    ['ir=9', 'ir: must be 1..8'],
    ['or=0', 'or: must be 1..8'],
    ['r=left', 'r: expected an integer, got "left"'],
    ['f=mov', 'f: unsupported format "mov"'],
    ['f=webp:webp', 'f: a fallback chain names a format twice'],
    ['f=webp:jpeg:jpg', 'f: a fallback chain names a format twice'],
    ['f=auto:webp', 'f: auto may only end a fallback chain'],
    ['f=avif:webp:png:gif:jpg:auto', 'f: a fallback chain has at most 5 formats'],
    ['f=avif:', 'f: "" cannot stand in a fallback chain'],
    ['f=avif:tiff', 'f: "tiff" cannot stand in a fallback chain'],
    ['g=north', 'g: expected an integer, got "north"'],
    ['ig=attention', 'ig: expected an integer, got "attention"'],
    ['fp=0.5', 'fp: expected x:y (fractions 0..1)'],
    ['fp=0.5:1.5', 'fp: must be at most 1'],
    ['g=attention,fp=0.1:0.1', 'g=attention and fp exclude each other'],
    ['g=entropy,oc=0:0:10:10', 'g=entropy cannot be combined with oc, ocr or or'],
    ['l=(g=attention%2Fa.png)', 'l: g=attention applies to the main image only'],
    ['q=101', 'q: must be 0..100'],
    ['o=2', 'o: expected 0 or 1'],
    ['lossless=yes', 'lossless: expected 0 or 1'],
    ['s=0', 's: must be 1..2'],
    ['s=3', 's: must be 1..2'],
    ['through=tiff', 'through: unknown format "tiff"'],
    ['unsharp=2', 'unsharp: expected RxS or RxS+G+T'],
    ['unsharp=0x1', 'unsharp radius: must be 1..1000'],
    ['unsharp=2x0', 'unsharp sigma: must be above 0'],
    ['unsharp=2x11', 'unsharp sigma: must be at most 10'],
    ['unsharp=2x1+1+0', 'unsharp threshold: must be above 0'],
    ['unsharp=2x1+1+1', 'unsharp threshold: must be below 1'],
    ['blur=2', 'blur: expected RxS'],
    ['blur=2x0', 'blur sigma: must be above 0'],
    ['blur=1000x1000', 'blur sigma: must be at most 100'],
    ['grayscale=101', 'grayscale: must be 0..100'],
    ['sepia=-1', 'sepia: must be 0..100'],
    ['brightness=1001', 'brightness: must be 0..1000'],
    ['contrast=x', 'contrast: expected an integer, got "x"'],
    ['invert=2', 'invert: expected 0 or 1'],
    ['expires=2030-01-01', 'expires: expected YYYY-MM-DDTHH:MM:SSZ'],
    ['expires=2030-02-30T00:00:00Z', 'expires: expected YYYY-MM-DDTHH:MM:SSZ'],
    ['sig=1.a%2Fb', 'sig: not a signature'],
    ['l=(x=70000%2Fa.png)', 'x: must be -65535..65535'],
    ['l=(xr=2%2Fa.png)', 'xr: must be at most 1'],
    ['l=(lg=0%2Fa.png)', 'lg: must be 1..9'],
    ['l=(mask=red%2Fa.png)', 'mask: expected white, black or alpha, optionally :0 or :1'],
    ['l=(dpr=2%2Fa.png)', 'l: unknown parameter "dpr"'],
    ['t=(size=0,text=a)', 't: size: must be above 0'],
    ['t=(size=1001,text=a)', 't: size: must be at most 1000'],
    ['t=(f=red,text=a)', 't: f: expected RRGGBB or RRGGBBAA'],
    ['t=(w=0,text=a)', 't: w: must be 1..65535'],
    ['t=(linespacing=11,text=a)', 't: linespacing: must be at most 10'],
    ['t=(align=3,text=a)', 't: align: must be 0..2'],
    ['t=(dir=-1,text=a)', 't: dir: must be 0..2'],
    ['t=(wrap=3,text=a)', 't: wrap: must be 0..2'],
    ['t=(ellipsize=2,text=a)', 't: ellipsize: expected 0 or 1'],
    ['t=(font=(Noto,weight=1),text=a)', 't: font option "weight=1" is not instance= or var='],
    ['t=(zoom=1,text=a)', 't: unknown parameter "zoom"'],
  ];
  it.each(outOfRange)('refuses %s', (param, expected) => {
    expect(reason(`/${param}/x.jpg`)).toBe(expected);
  });
});

describe('printParams', () => {
  it('prints a canonical, normalised string', () => {
    expect(printParams(params('/c/f=webp:jpeg,h=100,w=200,a=1,r=6/x.jpg'))).toBe(
      'w=200,h=100,or=6,f=webp:jpg',
    );
    expect(printParams({})).toBe('');
    expect(printParams(params('/l=(w=300%2fimages%2f1.png),t=(text=a%28b%29%2Cc)/x.jpg'))).toBe(
      'l=(w=300%2Fimages%2F1.png),t=(text=a%28b%29%2Cc)',
    );
    expect(printParams({ xr: 1e-7 } as ParsedParams)).toBe('');
    expect(printParams({ l: [{ xr: 1e-7, path: '/a' }] })).toBe('l=(xr=0.0000001%2Fa)');
  });

  it('can leave out sig and expires for cache keys', () => {
    const p = params('/w=10,expires=2030-01-01T00:00:00Z,sig=1.x/a.jpg');
    expect(printParams(p)).toBe('w=10,expires=2030-01-01T00:00:00Z,sig=1.x');
    expect(printParams(p, { omitAccess: true })).toBe('w=10');
  });

  it('formats a request path', () => {
    expect(formatPath({ w: 10 }, '/a.jpg', 'c/')).toBe('/c/w=10/a.jpg');
    expect(formatPath({}, 'a.jpg')).toBe('/a.jpg');
  });

  it('keeps f=json and f=blurhash apart from the format they describe', () => {
    expect(params('/f=json,w=10/a.jpg')).toEqual({ w: 10, info: 'json' });
    expect(printParams(params('/f=blurhash,f=webp,w=10/a.jpg'))).toBe('w=10,f=webp,f=blurhash');
    expect(printParams(params('/f=json,f=blurhash/a.jpg'))).toBe('f=blurhash');
    for (const chained of ['webp:json', 'json:jpg', 'blurhash:auto', 'JSON']) {
      expect(parsePath(`/f=${chained}/a.jpg`)).toMatchObject({ ok: false });
    }
  });

  it('reads fallback chains of up to five formats, canonically', () => {
    expect(params('/f=avif:webp:jpeg/a.jpg')).toEqual({ f: 'avif:webp:jpg' });
    expect(printParams(params('/f=avif:webp:png:gif:auto/a.jpg'))).toBe('f=avif:webp:png:gif:auto');
    expect(params('/f=webp:auto/a.jpg')).toEqual({ f: 'webp:auto' });
  });

  it('reads smart gravities and focal points', () => {
    expect(params('/w=10,h=10,a=2,g=attention/a.jpg')).toEqual({ w: 10, h: 10, a: 2, g: 'attention' });
    expect(printParams(params('/g=entropy,a=2,h=5,w=5,ir=auto/a.jpg'))).toBe('w=5,h=5,a=2,g=entropy,ir=auto');
    expect(printParams(params('/fp=0.25:1,a=2/a.jpg'))).toBe('a=2,fp=0.25:1');
    expect(params('/l=(fp=0:0.5,a=2%2Fa.png)/x.jpg').l?.[0]).toEqual({
      a: 2,
      fp: { x: 0, y: 0.5 },
      path: '/a.png',
    });
  });

  it('reads f=mp4, a format of its own that no fallback chain holds', () => {
    expect(params('/f=mp4,w=10/a.gif')).toEqual({ w: 10, f: 'mp4' });
    expect(printParams(params('/w=10,f=mp4/a.gif'))).toBe('w=10,f=mp4');
    for (const chained of ['webp:mp4', 'mp4:gif', 'MP4']) {
      expect(parsePath(`/f=${chained}/a.gif`)).toMatchObject({ ok: false });
    }
  });
});

// --- property-based -----------------------------------------------------------------------

const sortedPair = (a: number, b: number): [number, number] => (a < b ? [a, b] : [b, a]);
const noNegativeZero = (v: number) => v + 0;
const distinct = <T>(arb: fc.Arbitrary<T>) => fc.tuple(arb, arb).filter(([a, b]) => a !== b);
const fraction = fc.double({ min: 0, max: 1, noNaN: true }).map(noNegativeZero);

const colourArb = (not: Rgba): fc.Arbitrary<Rgba> =>
  fc
    .record({ r: fc.nat(255), g: fc.nat(255), b: fc.nat(255), alpha: fc.nat(255) })
    .filter((c) => c.r !== not.r || c.g !== not.g || c.b !== not.b || c.alpha !== not.alpha);

const clipArb: fc.Arbitrary<Clip> = fc.oneof(
  fc
    .tuple(
      distinct(fc.integer({ min: -65535, max: 65535 })),
      distinct(fc.integer({ min: -65535, max: 65535 })),
    )
    .map(([[x1, x2], [y1, y2]]) => {
      const [left, right] = sortedPair(x1, x2);
      const [top, bottom] = sortedPair(y1, y2);
      return { unit: 'px' as const, rect: { x1: left, y1: top, x2: right, y2: bottom } };
    }),
  fc
    .tuple(
      distinct(fc.double({ min: 0, max: 1, noNaN: true })),
      distinct(fc.double({ min: 0, max: 1, noNaN: true })),
    )
    .map(([[x1, x2], [y1, y2]]) => {
      const [left, right] = sortedPair(noNegativeZero(x1), noNegativeZero(x2));
      const [top, bottom] = sortedPair(noNegativeZero(y1), noNegativeZero(y2));
      return { unit: 'ratio' as const, rect: { x1: left, y1: top, x2: right, y2: bottom } };
    }),
);

const positive = (max: number) => fc.double({ min: Number.MIN_VALUE, max, noNaN: true });
const gravityArb = (not: number) => fc.integer({ min: 1, max: 9 }).filter((g) => g !== not);
const rotationArb = fc.constantFrom(2, 3, 4, 5, 6, 7, 8, 'auto' as const);
const sizeArb = fc.integer({ min: 1, max: 65535 });
const white = { r: 255, g: 255, b: 255, alpha: 255 };

const geometryArb = {
  w: sizeArb,
  h: sizeArb,
  a: fc.constantFrom(0 as const, 2 as const, 3 as const),
  b: colourArb(white),
  g: gravityArb(5),
  fp: fc.record({ x: fraction, y: fraction }),
  u: fc.constant(0 as const),
  ic: clipArb,
  ig: gravityArb(1),
  oc: clipArb,
  og: gravityArb(1),
  ir: rotationArb,
  or: rotationArb,
};

const placementArb = {
  x: fc.integer({ min: -65535, max: 65535 }),
  y: fc.integer({ min: -65535, max: 65535 }),
  xr: fc.double({ min: -1, max: 1, noNaN: true }).map(noNegativeZero),
  yr: fc.double({ min: -1, max: 1, noNaN: true }).map(noNegativeZero),
  lg: gravityArb(5),
  mask: fc.record(
    {
      type: fc.constantFrom('white' as const, 'black' as const, 'alpha' as const),
      keepOutside: fc.constant(true as const),
    },
    { requiredKeys: ['type'] },
  ),
};

const overlayArb = fc.record(
  {
    ...geometryArb,
    ...placementArb,
    path: fc.string({ unit: 'grapheme', minLength: 1 }).map((s) => `/${s}`),
  },
  { requiredKeys: ['path'] },
) as fc.Arbitrary<OverlayParams>;

const fontNameArb = fc.stringMatching(/^[A-Za-z0-9 ._\u3042-\u3093-]{1,30}$/);
const fontArb: fc.Arbitrary<Font> = fc
  .record(
    {
      name: fontNameArb,
      instance: fontNameArb,
      variations: fc
        .uniqueArray(
          fc.tuple(
            fc.stringMatching(/^[A-Za-z0-9]{4}$/),
            fc.double({ min: -10000, max: 10000, noNaN: true }),
          ),
          {
            minLength: 1,
            maxLength: 3,
            selector: ([tag]) => tag,
          },
        )
        .map((axes) =>
          axes
            .map(([tag, value]): [string, number] => [tag, noNegativeZero(value)])
            .sort(([a], [b]) => (a < b ? -1 : 1)),
        ),
    },
    { requiredKeys: ['name'] },
  )
  .filter((f) => f.name !== 'Noto Sans CJK JP' || f.instance !== undefined || f.variations !== undefined);

const textArb = fc.record(
  {
    ...placementArb,
    font: fontArb,
    size: positive(1000).filter((s) => s !== 24),
    f: colourArb({ r: 0, g: 0, b: 0, alpha: 255 }),
    b: colourArb({ r: 0, g: 0, b: 0, alpha: 0 }),
    w: sizeArb,
    h: sizeArb,
    linespacing: positive(10),
    align: fc.constantFrom(1 as const, 2 as const),
    dir: fc.constantFrom(1 as const, 2 as const),
    wrap: fc.constantFrom(1 as const, 2 as const),
    ellipsize: fc.constant(1 as const),
    justify: fc.constant(1 as const),
    strike: fc.constant(1 as const),
    text: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 200 }),
  },
  { requiredKeys: ['text'] },
) as fc.Arbitrary<TextParams>;

const THROUGH: ThroughFormat[] = ['jpg', 'png', 'gif', 'webp', 'bmp', 'heic', 'auto'];

const paramsArb = fc.record(
  {
    ...geometryArb,
    dpr: positive(10).filter((v) => v !== 1),
    f: fc.constantFrom(
      ...(['jpg', 'png', 'gif', 'webp', 'avif', 'webp:auto', 'webp:jpg', 'webp:png', 'webp:gif'] as const),
      ...(['avif:auto', 'avif:jpg', 'avif:png', 'avif:gif', 'mp4'] as const),
      ...(['avif:webp:jpg', 'png:avif:webp:gif:auto'] as const),
    ),
    q: fc.integer({ min: 0, max: 100 }).filter((q) => q !== 75),
    o: fc.constant(0 as const),
    lossless: fc.constant(1 as const),
    s: fc.constant(2 as const),
    through: fc.subarray(THROUGH, { minLength: 1 }),
    info: fc.constantFrom('json' as const, 'blurhash' as const),
    unsharp: fc.oneof(
      fc.record({ radius: fc.integer({ min: 1, max: 1000 }), sigma: positive(10) }),
      fc.record({
        radius: fc.integer({ min: 1, max: 1000 }),
        sigma: positive(10),
        gain: fc.double({ min: 0, max: 1000, noNaN: true }).map(noNegativeZero),
        threshold: fc.double({ min: Number.MIN_VALUE, max: 1, maxExcluded: true, noNaN: true }),
      }),
    ),
    blur: fc.record({ radius: fc.integer({ min: 1, max: 1000 }), sigma: positive(100) }),
    grayscale: fc.integer({ min: 1, max: 100 }),
    sepia: fc.integer({ min: 1, max: 100 }),
    brightness: fc.integer({ min: 0, max: 1000 }).filter((v) => v !== 100),
    contrast: fc.integer({ min: 0, max: 1000 }).filter((v) => v !== 100),
    invert: fc.constant(1 as const),
    l: fc.array(overlayArb, { minLength: 1, maxLength: 3 }),
    t: fc.array(textArb, { minLength: 1, maxLength: 2 }),
    expires: fc.integer({ min: 0, max: 253402300799 }),
    sig: fc.stringMatching(/^[A-Za-z0-9._=-]{0,60}$/),
  },
  { requiredKeys: [] },
) as fc.Arbitrary<ParsedParams>;

// Strings made of the grammar's own pieces reach far deeper than uniform noise.
const pieceArb = fc.constantFrom(
  ...[
    'w=',
    'h=',
    'a=',
    'b=',
    'f=',
    'l=(',
    't=(',
    'text=',
    'font=(',
    'ic=',
    'icr=',
    'x=',
    'mask=',
    'expires=',
  ],
  ...[
    '(',
    ')',
    ',',
    '/',
    '=',
    ':',
    '%2C',
    '%2c',
    '%2F',
    '%',
    '%E3%81%82',
    'c/',
    'c!/',
    '1',
    '0',
    '-',
    '.',
    'auto',
  ],
  ...['webp:auto', '2030-01-01T00:00:00Z', 'ffffff', '0:0:1:1', 'white:1', 'sig=1.x', 'x', ' ', 'é'],
);
const pathLikeArb = fc.array(pieceArb, { maxLength: 30 }).map((pieces) => `/${pieces.join('')}`);
const keyArb = fc.constantFrom(
  ...['w', 'h', 'a', 'b', 'g', 'u', 'dpr', 'ic', 'icr', 'ig', 'oc', 'c', 'ocr', 'cr', 'og', 'ir', 'or', 'r'],
  ...['f', 'q', 'o', 'lossless', 's', 'through', 'unsharp', 'blur', 'grayscale', 'sepia', 'brightness'],
  ...['contrast', 'invert', 'l', 't', 'expires', 'sig', 'zoom'],
);
const valueArb = fc.oneof(
  fc.constantFrom(
    ...[
      '0',
      '1',
      '2',
      '5',
      '9',
      '100',
      '400',
      '0.5',
      '-3',
      'auto',
      'ffffff',
      '00000080',
      '0:0:10:10',
      '0:0:0.5:0.5',
    ],
    ...[
      'webp:auto',
      'avif:jpeg',
      'jpg',
      'jpg:png:auto',
      '2x1.5',
      '2x1+0.5+0.1',
      '2030-01-01T00:00:00Z',
      '1.abc=',
    ],
    ...[
      '(w=10%2Fa.png)',
      '(size=30,text=hi)',
      '(mask=white:1,x=5,lg=9%2Fo.png)',
      '(w=5,h=5,a=3,b=ff000080/x.png)',
    ],
    ...['(font=(Noto%20Sans,instance=Bold,var=wght:700),f=ff0000,text=%E3%81%82%2C)', '(align=1,text=a(b)c)'],
  ),
  fc.string({ maxLength: 6 }),
);
const validItemArb = fc.constantFrom(
  ...[
    'w=400',
    'h=1',
    'a=0',
    'a=2',
    'b=00000080',
    'g=1',
    'u=0',
    'dpr=0.5',
    'ic=0:0:10:10',
    'icr=0:0:0.5:1',
    'ig=9',
  ],
  ...[
    'c=1:2:3:4',
    'cr=0.1:0.1:0.2:0.2',
    'og=5',
    'ir=auto',
    'r=6',
    'f=webp:auto',
    'f=avif:jpeg',
    'q=0',
    'o=0',
  ],
  ...[
    'lossless=1',
    's=2',
    'through=jpg:auto',
    'unsharp=2x1+0.5+0.1',
    'blur=1x0.5',
    'grayscale=50',
    'sepia=1',
  ],
  ...['brightness=0', 'contrast=150', 'invert=1', 'expires=2030-01-01T00:00:00%2B09:00', 'sig=1.abc='],
  ...[
    'l=(w=10%2Fa.png)',
    'l=(mask=white:1,x=-5,xr=0.5,lg=9%2Fo%2528.png)',
    'l=(w=5,h=5,a=3,b=ff000080/x.png)',
  ],
  ...['t=(size=30,text=hi)', 't=(font=(Noto%20Sans,instance=Bold,var=wght:700),f=ff0000,text=%E3%81%82%2C)'],
  ...['t=(align=1,dir=2,wrap=1,ellipsize=1,linespacing=1.5,text=a(b)c)', 't=(font=Noto%20Serif,text=%2F)'],
);
const paramListArb = fc
  .tuple(
    fc.constantFrom('', 'c/', 'c!/'),
    fc.array(
      fc.oneof(
        { weight: 5, arbitrary: validItemArb },
        { weight: 1, arbitrary: fc.tuple(keyArb, valueArb).map(([k, v]) => `${k}=${v}`) },
      ),
      { minLength: 1, maxLength: 8 },
    ),
    fc.constantFrom(',', '%2C', '%2c'),
  )
  .map(([prefix, items, separator]) => `/${prefix}${items.join(separator)}/a.jpg`);
const anyStringArb = fc.oneof(fc.string(), fc.string({ unit: 'binary' }), pathLikeArb, paramListArb);

describe('properties', () => {
  it('parse(print(params)) returns the same parameters', () => {
    fc.assert(
      fc.property(paramsArb, (p) => {
        expect(parseParams(printParams(p))).toEqual({ ok: true, params: p });
      }),
      { numRuns: 300 },
    );
  });

  it('formatPath and parsePath agree', () => {
    fc.assert(
      fc.property(paramsArb, fc.string({ unit: 'grapheme' }), (p, name) => {
        const imagePath = `/images/${encodeURIComponent(name)}.jpg`;
        expect(parsePath(formatPath(p, imagePath, 'c/'))).toMatchObject({ ok: true, params: p, imagePath });
      }),
    );
  });

  it('any string parses or gives a reason, and never throws', () => {
    fc.assert(
      fc.property(anyStringArb, (path) => {
        const parsed = parsePath(path);
        if (!parsed.ok) {
          expect(parsed.reason).toMatch(/^.{1,200}$/);
          return;
        }
        expect(parseParams(printParams(parsed.params))).toEqual({ ok: true, params: parsed.params });
      }),
      { numRuns: 2000 },
    );
  });
});
