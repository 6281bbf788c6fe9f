import sharp from 'sharp';
import { crc32 } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { parsePath } from '../grammar';
import { ImagingError } from './errors';
import { transform, type TransformRequest, type TransformResult } from './transform';

const limits = { maxInputPixels: 40_000_000, maxOutputPixels: 40_000_000, maxCost: 0, timeoutMs: 0 };

let photo: Buffer; // 2000x1500 JPEG, red grows left to right, green top to bottom
let small: Buffer; // 200x150 JPEG
let quadrants: Buffer; // 30x20 PNG, four colours: orientation is visible
let alpha: Buffer; // 400x300 PNG, left half transparent, right half blue
let logo: Buffer; // 100x50 opaque red PNG

async function gradient(width: number, height: number): Promise<Buffer> {
  const raw = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 3;
      raw[i] = Math.round((x * 255) / width);
      raw[i + 1] = Math.round((y * 255) / height);
      raw[i + 2] = 128;
    }
  }
  return sharp(raw, { raw: { width, height, channels: 3 } })
    .jpeg({ quality: 90 })
    .toBuffer();
}

beforeAll(async () => {
  photo = await gradient(2000, 1500);
  small = await gradient(200, 150);
  const block = (colour: string) => ({
    create: { width: 15, height: 10, channels: 3 as const, background: colour },
  });
  quadrants = await sharp({ create: { width: 30, height: 20, channels: 3, background: '#000' } })
    .composite([
      { input: block('#ff0000'), left: 0, top: 0 },
      { input: block('#00ff00'), left: 15, top: 0 },
      { input: block('#0000ff'), left: 0, top: 10 },
      { input: block('#ffffff'), left: 15, top: 10 },
    ])
    .png()
    .toBuffer();
  alpha = await sharp({
    create: { width: 400, height: 300, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } },
  })
    .composite([
      {
        input: { create: { width: 200, height: 300, channels: 4, background: '#0000ff' } },
        left: 200,
        top: 0,
      },
    ])
    .png()
    .toBuffer();
  logo = await sharp({ create: { width: 100, height: 50, channels: 3, background: '#ff0000' } })
    .png()
    .toBuffer();
});

async function convert(
  path: string,
  source: Buffer,
  options: Partial<TransformRequest> = {},
): Promise<TransformResult> {
  const parsed = parsePath(path);
  if (!parsed.ok) throw new Error(parsed.reason);
  return transform({
    source,
    params: parsed.params,
    loadOverlay: async (overlayPath) => {
      if (overlayPath === '/logo.png') return logo;
      throw new Error(`no ${overlayPath}`);
    },
    allowText: true,
    limits,
    ...options,
  });
}

async function pixels(data: Buffer) {
  const { data: raw, info } = await sharp(data).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  return {
    info,
    at: (x: number, y: number) => [...raw.subarray((y * info.width + x) * 4, (y * info.width + x) * 4 + 4)],
    raw,
  };
}

async function failure(work: Promise<unknown>): Promise<ImagingError> {
  const error = await work.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ImagingError);
  return error as ImagingError;
}

describe('resize modes', () => {
  it.each([
    ['/w=400/a.jpg', 400, 300],
    ['/h=300/a.jpg', 400, 300],
    ['/w=400,h=400/a.jpg', 400, 400],
    ['/w=400,h=400,a=0/a.jpg', 400, 300],
    ['/w=400,h=400,a=2/a.jpg', 400, 400],
    ['/w=400,h=400,a=3/a.jpg', 400, 400],
    ['/w=200,dpr=2/a.jpg', 400, 300],
    ['/w=10000,h=100/a.jpg', 8192, 81],
  ])('%s gives %ix%i', async (path, width, height) => {
    expect(await convert(path, photo)).toMatchObject({ width, height, format: 'jpeg' });
  });

  it.each([
    ['w=400', 400, 300, 200, 150],
    ['w=400,h=400,a=0', 400, 300, 200, 150],
    ['w=400,h=100', 400, 100, 200, 100],
    ['w=400,h=400,a=2', 400, 400, 200, 150],
    ['w=400,h=400,a=3', 400, 400, 400, 400],
  ])('%s enlarges to %ix%i, with u=0 gives %ix%i', async (params, width, height, keptWidth, keptHeight) => {
    expect(await convert(`/${params}/a.jpg`, small)).toMatchObject({ width, height });
    expect(await convert(`/${params},u=0/a.jpg`, small)).toMatchObject({
      width: keptWidth,
      height: keptHeight,
    });
  });

  it('pads with the background colour and crops by gravity', async () => {
    const padded = await pixels((await convert('/w=400,h=400,a=3,b=ff0000,f=png/a.jpg', photo)).data);
    expect(padded.at(200, 10)).toEqual([255, 0, 0, 255]);
    expect(padded.at(200, 200)[0]).toBeLessThan(200);
    const left = await pixels((await convert('/w=400,h=400,a=2,g=1,f=png/a.jpg', photo)).data);
    const right = await pixels((await convert('/w=400,h=400,a=2,g=9,f=png/a.jpg', photo)).data);
    expect((right.at(0, 200)[0] ?? 0) - (left.at(0, 200)[0] ?? 0)).toBeGreaterThan(40);
  });

  it('scales down to the output pixel limit', async () => {
    const result = await convert('/w=400/a.jpg', photo, { limits: { ...limits, maxOutputPixels: 10_000 } });
    expect(result).toMatchObject({ width: 115, height: 86 });
  });
});

describe('output formats', () => {
  it.each([
    ['/w=100/a.jpg', 'photo', 'jpeg', 'jpeg', 'image/jpeg'],
    ['/w=100/a.png', 'alpha', 'png', 'png', 'image/png'],
    ['/w=100,f=png/a.jpg', 'photo', 'png', 'png', 'image/png'],
    ['/w=100,f=gif/a.jpg', 'photo', 'gif', 'gif', 'image/gif'],
    ['/w=100,f=webp,q=80/a.jpg', 'photo', 'webp', 'webp', 'image/webp'],
    ['/w=100,f=webp,lossless=1/a.jpg', 'photo', 'webp', 'webp', 'image/webp'],
    ['/w=100,f=avif/a.jpg', 'photo', 'avif', 'heif', 'image/avif'],
    ['/w=100,f=jpg,q=30,o=0/a.png', 'alpha', 'jpeg', 'jpeg', 'image/jpeg'],
  ])('%s from %s gives %s', async (path, source, format, decoded, contentType) => {
    const result = await convert(path, source === 'photo' ? photo : alpha);
    expect(result).toMatchObject({ format, contentType, varyAccept: false, passedThrough: false });
    expect((await sharp(result.data).metadata()).format).toBe(decoded);
  });

  it('flattens transparency onto the background for JPEG', async () => {
    const result = await pixels((await convert('/f=jpg,b=00ff00/a.png', alpha)).data);
    expect(
      result
        .at(10, 10)
        .slice(0, 3)
        .map((v) => Math.round(v / 10)),
    ).toEqual([0, 26, 0]);
  });

  const browser = 'image/avif,image/webp,image/apng,*/*;q=0.8';
  it.each([
    ['webp:jpg', browser, 'webp'],
    ['webp:jpg', 'image/jpeg,*/*', 'jpeg'],
    ['webp:png', 'image/webp;q=0', 'png'],
    ['avif:auto', browser, 'avif'],
    ['avif:auto', 'image/webp', 'jpeg'],
  ])('f=%s with Accept %s sends %s', async (f, accept, format) => {
    expect(await convert(`/w=50,f=${f}/a.jpg`, photo, { accept })).toMatchObject({
      format,
      varyAccept: true,
    });
  });

  it('passes listed formats through untouched', async () => {
    const result = await convert('/w=100,through=jpg:png/a.jpg', photo);
    expect(result).toMatchObject({
      passedThrough: true,
      format: 'jpeg',
      contentType: 'image/jpeg',
      width: 0,
    });
    expect(result.data).toBe(photo);
    expect(await convert('/w=100,through=png/a.jpg', photo)).toMatchObject({
      passedThrough: false,
      width: 100,
    });
    const bmp = Buffer.from('BM not really a bitmap');
    expect(await convert('/through=auto/a.bmp', bmp)).toMatchObject({
      passedThrough: true,
      contentType: 'image/bmp',
    });
  });
});

describe('clips and rotations', () => {
  it('clips the input in pixels, ratios and from a gravity', async () => {
    const sourceAt = await pixels(await sharp(photo).png().toBuffer());
    for (const [path, x, y] of [
      ['/ic=0:0:1000:750,f=png/a.jpg', 0, 0],
      ['/icr=0.5:0.5:1:1,f=png/a.jpg', 1000, 750],
      ['/ic=0:0:1000:750,ig=9,f=png/a.jpg', 1000, 750],
    ] as const) {
      const result = await convert(path, photo);
      expect(result).toMatchObject({ width: 1000, height: 750 });
      expect((await pixels(result.data)).at(0, 0)).toEqual(sourceAt.at(x, y));
    }
  });

  it('clips the output after resizing', async () => {
    expect(await convert('/w=400,oc=0:0:100:50,og=9/a.jpg', photo)).toMatchObject({ width: 100, height: 50 });
    expect(await convert('/w=400,c=10:10:1000:1000/a.jpg', photo)).toMatchObject({ width: 390, height: 290 });
  });

  it('refuses clips outside the image', async () => {
    const error = await failure(convert('/ic=3000:3000:4000:4000/a.jpg', photo));
    expect(error).toMatchObject({ code: 'empty-clip', status: 422, message: 'ic lies outside the image' });
  });

  it('rotates before and after resizing', async () => {
    expect(await convert('/ir=6/a.jpg', photo)).toMatchObject({ width: 1500, height: 2000 });
    expect(await convert('/w=400,or=8/a.jpg', photo)).toMatchObject({ width: 300, height: 400 });
  });

  it('undoes every EXIF orientation like sharp does', async () => {
    for (const orientation of [1, 2, 3, 4, 5, 6, 7, 8]) {
      const tagged = await sharp(quadrants).withMetadata({ orientation }).png().toBuffer();
      expect((await sharp(tagged).metadata()).orientation).toBe(orientation);
      const expected = await sharp(tagged).autoOrient().raw().toBuffer({ resolveWithObject: true });
      const result = await convert('/ir=auto,f=png/a.png', tagged);
      const actual = await sharp(result.data).raw().toBuffer({ resolveWithObject: true });
      expect([actual.info.width, actual.info.height], `orientation ${orientation}`).toEqual([
        expected.info.width,
        expected.info.height,
      ]);
      expect(actual.data.equals(expected.data), `orientation ${orientation}`).toBe(true);
    }
  });

  it('composes rotations and applies the output rotation after the clip', async () => {
    const raw = async (path: string) => (await pixels((await convert(path, quadrants)).data)).raw;
    expect((await raw('/ir=6,or=6,f=png/a.png')).equals(await raw('/ir=3,f=png/a.png'))).toBe(true);
    const expected = await sharp(quadrants)
      .extract({ left: 0, top: 0, width: 20, height: 15 })
      .rotate(90)
      .ensureAlpha()
      .raw()
      .toBuffer();
    expect((await raw('/oc=0:0:20:15,or=6,f=png/a.png')).equals(expected)).toBe(true);
  });
});

describe('metadata', () => {
  it('strips metadata unless s=2 keeps the orientation', async () => {
    const tagged = await sharp(small)
      .withMetadata({ orientation: 6 })
      .withExifMerge({ IFD0: { Artist: 'someone' } })
      .jpeg()
      .toBuffer();
    expect((await sharp(tagged).metadata()).exif?.includes('someone')).toBe(true);
    expect((await sharp((await convert('/w=100/a.jpg', tagged)).data).metadata()).exif).toBeUndefined();
    const kept = await sharp((await convert('/w=100,s=2/a.jpg', tagged)).data).metadata();
    expect(kept.orientation).toBe(6);
    expect(kept.exif?.includes('someone')).toBe(false);
    expect(
      (await sharp((await convert('/w=100,s=2,ir=auto/a.jpg', tagged)).data).metadata()).orientation,
    ).toBe(undefined);
  });
});

describe('filters', () => {
  const solid = () =>
    sharp({ create: { width: 50, height: 50, channels: 3, background: { r: 10, g: 100, b: 200 } } })
      .png()
      .toBuffer();

  it.each([
    ['invert=1', [245, 155, 55]],
    ['brightness=50', [5, 50, 100]],
    ['contrast=0', [128, 128, 128]],
    ['grayscale=100', [84, 84, 84]],
  ])('%s', async (params, expected) => {
    const result = await pixels((await convert(`/${params},f=png/a.png`, await solid())).data);
    expect(
      result
        .at(25, 25)
        .slice(0, 3)
        .map((v, i) => Math.abs(v - (expected[i] ?? 0)) <= 2),
    ).toEqual([true, true, true]);
  });

  it('tones sepia and runs blur and unsharp', async () => {
    const [r = 0, g = 0, b = 0] = (
      await pixels((await convert('/sepia=100,f=png/a.png', await solid())).data)
    ).at(25, 25);
    expect(r > g && g > b).toBe(true);
    expect(await convert('/w=300,blur=2x1.5,unsharp=2x1+1.5+0.05/a.jpg', photo)).toMatchObject({
      width: 300,
    });
  });
});

describe('overlays', () => {
  it('composes an overlay at its gravity and offset', async () => {
    const result = await convert('/w=400,l=(w=50,lg=1,x=10,y=20%2Flogo.png),f=png/a.jpg', photo);
    const image = await pixels(result.data);
    expect(image.at(15, 25)).toEqual([255, 0, 0, 255]);
    expect(image.at(5, 5)).not.toEqual([255, 0, 0, 255]);
    expect(image.at(70, 25)).not.toEqual([255, 0, 0, 255]);
  });

  it('cuts overlays larger than the base and keeps brightness off the overlay', async () => {
    const result = await convert('/w=100,brightness=50,l=(w=500%2Flogo.png),f=png/a.jpg', photo);
    expect(result).toMatchObject({ width: 100, height: 75 });
    expect((await pixels(result.data)).at(50, 37)).toEqual([255, 0, 0, 255]);
  });

  it('masks the base with an overlay', async () => {
    const masked = await pixels(
      (await convert('/w=400,l=(w=100,lg=1,mask=alpha%2Flogo.png),f=png/a.jpg', photo)).data,
    );
    expect(masked.at(10, 10)[3]).toBe(255);
    expect(masked.at(200, 200)[3]).toBe(0);
    const kept = await pixels(
      (await convert('/w=400,l=(w=100,lg=1,mask=black:1%2Flogo.png)/a.png', alpha)).data,
    );
    expect(kept.at(10, 10)[3]).toBe(0);
    expect(kept.at(300, 200)).toEqual([0, 0, 255, 255]);
  });

  it('reports an overlay that cannot be loaded', async () => {
    const error = await failure(convert('/l=(%2Fmissing.png)/a.jpg', photo));
    expect(error).toMatchObject({ code: 'overlay-unavailable', status: 422 });
  });
});

describe('text overlays', () => {
  const japanese = encodeURIComponent('こんにちは世界');

  it('renders Japanese text', async () => {
    const plain = await pixels((await convert('/w=400,f=png/a.jpg', small)).data);
    const result = await pixels(
      (await convert(`/w=400,t=(size=40,f=ff0000,b=ffffff,text=${japanese}),f=png/a.jpg`, small)).data,
    );
    let red = 0;
    let white = 0;
    for (let i = 0; i < result.raw.length; i += 4) {
      const [r = 0, g = 0, b = 0] = result.raw.subarray(i, i + 3);
      if (r > 200 && g < 80 && b < 80) red++;
      if (r > 240 && g > 240 && b > 240) white++;
    }
    // Seven full-width glyphs of 40 px on a white box: clearly more ink than a fallback box.
    expect(red).toBeGreaterThan(1500);
    expect(white).toBeGreaterThan(3000);
    expect(result.raw.equals(plain.raw)).toBe(false);
  });

  it('wraps, aligns and ellipsizes within a box', async () => {
    const text = encodeURIComponent('長い文章は箱に収まるように省略されます。'.repeat(3));
    const result = await convert(
      `/w=400,t=(w=200,h=40,size=20,align=1,ellipsize=1,lg=1,text=${text}),f=png/a.jpg`,
      small,
    );
    expect(result).toMatchObject({ width: 400, height: 300 });
  });

  it('is refused unless the organization enables it', async () => {
    const error = await failure(convert(`/t=(text=${japanese})/a.jpg`, small, { allowText: false }));
    expect(error).toMatchObject({ code: 'text-disabled', status: 403 });
  });

  it('refuses text too large to render', async () => {
    const error = await failure(convert(`/t=(size=1000,text=${'x'.repeat(900)})/a.jpg`, small));
    expect(error).toMatchObject({ code: 'too-large', status: 422 });
  });
});

describe('bad input', () => {
  it('refuses a decompression bomb from its header', async () => {
    const png = Buffer.from(
      await sharp({ create: { width: 1, height: 1, channels: 3, background: '#000' } })
        .png()
        .toBuffer(),
    );
    png.writeUInt32BE(50_000, 16);
    png.writeUInt32BE(50_000, 20);
    png.writeUInt32BE(crc32(png.subarray(12, 29)), 29);
    const error = await failure(convert('/w=100/a.png', png));
    expect(error).toMatchObject({ code: 'too-large', status: 422 });
  });

  it('refuses unknown formats and broken images as 422', async () => {
    expect(
      await failure(convert('/w=100/a.svg', Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'))),
    ).toMatchObject({
      code: 'unsupported-format',
      status: 422,
    });
    expect(
      await failure(convert('/w=100/a.heic', Buffer.from('\0\0\0\x18ftypheic\0\0\0\0mif1heic'))),
    ).toMatchObject({
      code: 'unsupported-format',
      message: 'heic images cannot be converted',
    });
    expect(await failure(convert('/w=100/a.jpg', photo.subarray(0, 2000)))).toMatchObject({
      code: 'invalid-image',
      status: 422,
    });
  });
});

describe('cost budget and deadline', () => {
  const budgeted = (maxCost: number, timeoutMs = 0) => ({ limits: { ...limits, maxCost, timeoutMs } });

  it('refuses a conversion over the budget from the headers alone, before decoding', async () => {
    // The first 2000 bytes hold the header but not the pixels: decoding would fail as invalid.
    const truncated = photo.subarray(0, 2000);
    const error = await failure(convert('/w=4000,h=3000,f=gif/a.jpg', truncated, budgeted(3000)));
    expect(error).toMatchObject({ code: 'too-costly', status: 422 });
    expect(error.message).toMatch(/more than the 3000 allowed \(encoding gif\)/);
  });

  it('charges overlays and filters, and passes what fits', async () => {
    const fits = await convert('/w=400,blur=3x2,l=(w=50%2Flogo.png)/a.jpg', photo, budgeted(3000));
    expect(fits.cost).toBeGreaterThan(0);
    expect(fits.cost).toBeLessThan(100);
    const filtered = await failure(convert('/blur=5x100,f=webp/a.jpg', photo, budgeted(fits.cost + 300)));
    expect(filtered).toMatchObject({ code: 'too-costly' });
  });

  it('stops a conversion past its deadline with a 503', async () => {
    const large = await sharp({
      create: {
        width: 4000,
        height: 3000,
        channels: 3,
        background: '#000',
        noise: { type: 'gaussian', mean: 128, sigma: 40 },
      },
    })
      .jpeg()
      .toBuffer();
    const started = Date.now();
    const error = await failure(convert('/blur=1x100,unsharp=2x10,f=png/a.jpg', large, budgeted(0, 500)));
    expect(error).toMatchObject({ code: 'timeout', status: 503 });
    // sharp counts in whole seconds: the pipeline is stopped within about one.
    expect(Date.now() - started).toBeLessThan(2_500);
  });
});
