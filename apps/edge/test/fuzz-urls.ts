// Delivery URLs as an attacker or a careless client writes them: every parameter of the
// grammar with values inside, on and past its bounds, junk values, unknown keys, nested
// overlays, odd separators and hostile image paths. Shared by the fuzz test and bench/attack.ts.
import fc from 'fast-check';

const int = (min: number, max: number) => fc.integer({ min, max }).map(String);
const decimal = (min: number, max: number) =>
  fc.double({ min, max, noNaN: true, noDefaultInfinity: true }).map((n) => String(n));
const oneOf = (...values: string[]) => fc.constantFrom(...values);
const junk = fc.string({
  unit: fc.constantFrom(...'0123456789abcxyz,()/%=:+.-_~!*\'"\\ éあ\u0000'.split('')),
  maxLength: 12,
});
const colour = fc.oneof(
  fc.integer({ min: 0, max: 0xffffff }).map((n) => n.toString(16).padStart(6, '0')),
  fc.integer({ min: 0, max: 0xffffffff }).map((n) => n.toString(16).padStart(8, '0')),
  junk,
);
const rect = (values: fc.Arbitrary<string>) =>
  fc.tuple(values, values, values, values).map((parts) => parts.join(':'));
const rotation = fc.oneof(int(0, 9), oneOf('auto'));

const geometry: Record<string, fc.Arbitrary<string>> = {
  w: int(-1, 70_000),
  h: int(-1, 70_000),
  a: int(-1, 4),
  b: colour,
  g: fc.oneof(int(0, 10), oneOf('attention', 'entropy', 'north')),
  fp: fc.tuple(decimal(-0.5, 1.5), decimal(-0.5, 1.5)).map((parts) => parts.join(':')),
  u: int(-1, 2),
  ic: rect(int(-70_000, 70_000)),
  icr: rect(decimal(-0.5, 1.5)),
  ig: int(0, 10),
  oc: rect(int(-70_000, 70_000)),
  c: rect(int(-100, 5_000)),
  ocr: rect(decimal(-0.5, 1.5)),
  og: int(0, 10),
  ir: rotation,
  or: rotation,
  r: rotation,
};

const main: Record<string, fc.Arbitrary<string>> = {
  ...geometry,
  dpr: decimal(-1, 12),
  f: oneOf(
    'auto',
    'jpg',
    'png',
    'gif',
    'webp',
    'avif',
    'webp:auto',
    'webp:jpg',
    'avif:png',
    'webp:gif',
    'bmp',
    'mp4',
    'json',
    'blurhash',
    'webp:json',
    'avif:webp:jpg',
    'png:avif:webp:gif:auto',
    'avif:webp:png:gif:jpg:auto',
    'avif:webp:avif',
    'auto:webp',
  ),
  q: int(-1, 101),
  o: int(-1, 2),
  lossless: int(-1, 2),
  s: int(0, 3),
  through: fc
    .array(oneOf('jpg', 'png', 'gif', 'webp', 'bmp', 'heic', 'auto', 'tiff'), { maxLength: 3 })
    .map((list) => list.join(':')),
  unsharp: fc
    .tuple(int(0, 1_001), decimal(0, 12), decimal(0, 1_001), decimal(0, 1.2))
    .map(([r, s, g, t]) => `${r}x${s}+${g}+${t}`),
  blur: fc.tuple(int(0, 1_001), decimal(0, 120)).map(([r, s]) => `${r}x${s}`),
  grayscale: int(-1, 101),
  sepia: int(-1, 101),
  brightness: int(-1, 1_100),
  contrast: int(-1, 1_100),
  invert: int(-1, 2),
  expires: oneOf('2099-01-01T00:00:00Z', '2000-01-01T00:00:00Z', '2030-02-30T00:00:00Z', 'tomorrow'),
  sig: oneOf('1.AAAA', '2.x', ''),
};

const overlayPath = oneOf('%2Flogo.png', '%2Fphoto.jpg', '%2Fmissing.png', '%2F..%2Fsecret', '');
const overlay = fc
  .tuple(
    fc.array(
      fc.oneof(
        ...Object.entries(geometry).map(([key, value]) => value.map((v) => `${key}=${v}`)),
        ...['x', 'y'].map((key) => int(-70_000, 70_000).map((v) => `${key}=${v}`)),
        ...['xr', 'yr'].map((key) => decimal(-2, 2).map((v) => `${key}=${v}`)),
        oneOf('mask=white', 'mask=black:1', 'mask=alpha', 'mask=red', 'lg=3', 'dpr=2'),
      ),
      { maxLength: 5 },
    ),
    overlayPath,
  )
  .map(([params, path]) => `l=(${params.join(',')}${path})`);
const text = fc
  .tuple(int(-1, 1_100), fc.string({ maxLength: 30 }))
  .map(([size, words]) => `t=(size=${size},text=${encodeURIComponent(words)})`);

const param = fc.oneof(
  {
    weight: 12,
    arbitrary: fc.oneof(...Object.entries(main).map(([key, value]) => value.map((v) => `${key}=${v}`))),
  },
  {
    weight: 2,
    arbitrary: fc.tuple(fc.constantFrom(...Object.keys(main)), junk).map(([key, value]) => `${key}=${value}`),
  },
  { weight: 2, arbitrary: overlay },
  { weight: 1, arbitrary: text },
  { weight: 1, arbitrary: fc.tuple(junk, junk).map(([key, value]) => `${key}=${value}`) },
  { weight: 1, arbitrary: junk },
);

const imagePath = fc.oneof(
  { weight: 8, arbitrary: oneOf('/photo.jpg', '/logo.png') },
  {
    weight: 1,
    arbitrary: oneOf(
      '/missing.jpg',
      '/a/../photo.jpg',
      '/%2e%2e/photo.jpg',
      '/photo%00.jpg',
      '/%zz',
      '/',
      '//photo.jpg',
    ),
  },
);

/** What an HTTP client may put on the request line: the rest percent-encoded as UTF-8. */
function onTheWire(path: string): string {
  return path.replace(/[^\u0021-\u007e]/gu, (c) => encodeURIComponent(c));
}

/** A request path (no host) of the delivery grammar, well or badly formed. */
export const fuzzPath: fc.Arbitrary<string> = fc
  .tuple(oneOf('', 'c/', 'c!/'), fc.array(param, { maxLength: 6 }), oneOf(',', '%2C', '%2c'), imagePath)
  .map(([prefix, params, separator, path]) =>
    onTheWire(params.length ? `/${prefix}${params.join(separator)}${path}` : path),
  );

/** `count` paths, the same ones for the same seed. */
export function fuzzPaths(count: number, seed: number): string[] {
  return fc.sample(fuzzPath, { numRuns: count, seed });
}
