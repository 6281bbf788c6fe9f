import sharp from 'sharp';
import { crc32 } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  canvas,
  convert as convertPath,
  failure,
  noise,
  noLimits,
  transparent,
  type Rectangle,
} from './test-fixtures';
import type { TransformRequest } from './transform';

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
  const block = (left: number, top: number, colour: string) => ({ left, top, width: 15, height: 10, colour });
  quadrants = await canvas(30, 20, '#000', [
    block(0, 0, '#ff0000'),
    block(15, 0, '#00ff00'),
    block(0, 10, '#0000ff'),
    block(15, 10, '#ffffff'),
  ])
    .png()
    .toBuffer();
  alpha = await canvas(400, 300, transparent, [
    { left: 200, top: 0, width: 200, height: 300, colour: '#0000ff' },
  ])
    .png()
    .toBuffer();
  logo = await canvas(100, 50, '#ff0000').png().toBuffer();
});

const convert = (path: string, source: Buffer, options: Partial<TransformRequest> = {}) =>
  convertPath(path, source, { overlays: { '/logo.png': logo }, ...options });

async function pixels(data: Buffer) {
  const { data: raw, info } = await sharp(data).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  return {
    info,
    at: (x: number, y: number) => [...raw.subarray((y * info.width + x) * 4, (y * info.width + x) * 4 + 4)],
    raw,
  };
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
    const result = await convert('/w=400/a.jpg', photo, { limits: { ...noLimits, maxOutputPixels: 10_000 } });
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

  it('refuses a JPEG whose frame header claims more pixels than allowed', async () => {
    const jpeg = Buffer.from(
      await sharp({ create: { width: 8, height: 8, channels: 3, background: '#000' } })
        .jpeg()
        .toBuffer(),
    );
    const frame = jpeg.indexOf(Buffer.from([0xff, 0xc0]));
    jpeg.writeUInt16BE(50_000, frame + 5); // height
    jpeg.writeUInt16BE(50_000, frame + 7); // width
    const error = await failure(convert('/w=100/a.jpg', jpeg));
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
      message: 'HEIC (HEVC) images cannot be converted by this edge; through=heic sends them unconverted',
    });
    expect(await failure(convert('/w=100/a.jpg', photo.subarray(0, 2000)))).toMatchObject({
      code: 'invalid-image',
      status: 422,
    });
  });
});

describe('cost budget and deadline', () => {
  const budgeted = (maxCost: number, timeoutMs = 0) => ({ limits: { ...noLimits, maxCost, timeoutMs } });

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
    const large = await noise(4000, 3000, 40).jpeg().toBuffer();
    const started = Date.now();
    const error = await failure(convert('/blur=1x100,unsharp=2x10,f=png/a.jpg', large, budgeted(0, 500)));
    expect(error).toMatchObject({ code: 'timeout', status: 503 });
    // sharp counts in whole seconds: the pipeline is stopped within about one.
    expect(Date.now() - started).toBeLessThan(2_500);
    // Making the 12-megapixel noise takes 3 to 4 s of its own on a 2-core machine.
  }, 15_000);
});

describe('smart crops', () => {
  // A smooth grey field with a small black, white and red checkerboard near the right edge:
  // the only detail, colour and contrast in the picture.
  let scene: Buffer;
  const patch = { left: 1040, top: 60, size: 120 };

  beforeAll(async () => {
    const squares: Rectangle[] = [];
    for (let y = 0; y < patch.size; y += 10) {
      for (let x = 0; x < patch.size; x += 10) {
        const colour = ['#000000', '#ffffff', '#ff0000'][(x / 10 + y / 10) % 3]!;
        squares.push({ left: patch.left + x, top: patch.top + y, width: 10, height: 10, colour });
      }
    }
    scene = await canvas(1200, 800, '#8c8c8c', squares).jpeg({ quality: 95 }).toBuffer();
  });

  /** Pixels of the output far from the grey field: how much of the patch the crop shows. */
  async function patchPixels(data: Buffer): Promise<number> {
    const { raw, info } = await pixels(data);
    let count = 0;
    for (let i = 0; i < info.width * info.height; i++) {
      const [r = 0, g = 0, b = 0] = raw.subarray(i * 4, i * 4 + 3);
      if (Math.max(Math.abs(r - 140), Math.abs(g - 140), Math.abs(b - 140)) > 60) count++;
    }
    return count;
  }

  it.each(['attention', 'entropy'])('g=%s keeps the detailed patch that a centre crop misses', async (g) => {
    // 1200x800 covers 300x300 at 450x300: the patch lands at x 390..435, right of the centre crop.
    const centre = await convert('/w=300,h=300,a=2/x.jpg', scene);
    const smart = await convert(`/w=300,h=300,a=2,g=${g}/x.jpg`, scene);
    expect([smart.width, smart.height]).toEqual([300, 300]);
    expect(await patchPixels(centre.data)).toBeLessThan(50);
    // The patch is 45x45 px once scaled: nearly all of it is in the smart crop.
    expect(await patchPixels(smart.data)).toBeGreaterThan(1500);
  });

  it('finds the patch in the turned image after an input rotation', async () => {
    // ir=6 turns clockwise: the patch goes from the top right to the bottom right.
    const smart = await convert('/w=300,h=300,a=2,g=attention,ir=6/x.jpg', scene);
    expect([smart.width, smart.height]).toEqual([300, 300]);
    expect(await patchPixels(smart.data)).toBeGreaterThan(1500);
  });

  it('keeps a focal point in frame', async () => {
    const centre = patch.left + patch.size / 2;
    const focal = await convert(`/w=300,h=300,a=2,fp=${centre / 1200}:0.5/x.jpg`, scene);
    expect(await patchPixels(focal.data)).toBeGreaterThan(1500);
  });
});

describe('SVG input', () => {
  // A 20x10 document: a black rectangle over its left half.
  const drawing = Buffer.from(
    '<svg xmlns="http://www.w3.org/2000/svg" width="20" height="10" viewBox="0 0 20 10">' +
      '<rect x="0" y="0" width="10" height="10" fill="#000"/></svg>',
  );
  const allowed = { allowSvg: true };

  it('is unrecognised data unless the origin allows it', async () => {
    expect(await failure(convert('/w=100/a.svg', drawing))).toMatchObject({ code: 'unsupported-format' });
    const passed = await convert('/through=auto/a.svg', drawing);
    expect(passed).toMatchObject({ passedThrough: true, contentType: 'application/octet-stream' });
  });

  it('is drawn at the requested size, sharp rather than enlarged', async () => {
    const result = await convert('/w=400/a.svg', drawing, allowed);
    expect(result).toMatchObject({ width: 400, height: 200, format: 'png' });
    const { at, info } = await pixels(result.data);
    // Along the middle row: opaque black up to x=200, then transparent, with no blurred ramp.
    const row = Array.from({ length: info.width }, (_, x) => at(x, 100)[3]!);
    expect(row.filter((alpha) => alpha > 5 && alpha < 250).length).toBeLessThanOrEqual(2);
    expect(at(195, 100)).toEqual([0, 0, 0, 255]);
    expect(at(205, 100)[3]).toBe(0);
    // An input clip in the document's own pixels, drawn at the output's scale too.
    const clipped = await convert('/ic=5:0:15:10,w=300/a.svg', drawing, allowed);
    expect([clipped.width, clipped.height]).toEqual([300, 300]);
    const half = await pixels(clipped.data);
    expect(half.at(140, 150)).toEqual([0, 0, 0, 255]);
    expect(half.at(160, 150)[3]).toBe(0);
    expect((await convert('/f=jpg,w=40/a.svg', drawing, allowed)).format).toBe('jpeg');
  });

  it('refuses documents that are not self-contained, or too large', async () => {
    const external = Buffer.from(
      '<svg xmlns="http://www.w3.org/2000/svg"><image href="http://127.0.0.1:9/a.png"/></svg>',
    );
    expect(await failure(convert('/w=10/a.svg', external, allowed))).toMatchObject({ code: 'unsafe-svg' });
    const entity = Buffer.from('<!DOCTYPE svg [<!ENTITY a "a">]><svg xmlns="http://www.w3.org/2000/svg"/>');
    expect(await failure(convert('/w=10/a.svg', entity, allowed))).toMatchObject({ code: 'unsafe-svg' });
    const huge = Buffer.from(
      '<svg xmlns="http://www.w3.org/2000/svg" width="100000" height="100000"><rect width="9" height="9"/></svg>',
    );
    const small = { ...allowed, limits: { ...noLimits, maxInputPixels: 100_000 } };
    // A few kilobytes of PNG that librsvg would decode into 9 MP: measured from its header first.
    const bomb = await canvas(3000, 3000, '#000').png().toBuffer();
    const embedding = (png: Buffer) =>
      Buffer.from(
        '<svg xmlns="http://www.w3.org/2000/svg" width="20" height="10">' +
          `<image width="20" height="10" href="data:image/png;base64,${png.toString('base64')}"/></svg>`,
      );
    expect(await failure(convert('/w=10/a.svg', embedding(bomb), small))).toMatchObject({
      code: 'too-large',
    });
    const drawnWithImage = await convert('/w=40/a.svg', embedding(logo), small);
    expect((await pixels(drawnWithImage.data)).at(20, 10)).toEqual([255, 0, 0, 255]);
    expect(await failure(convert('/w=100/a.svg', huge, small))).toMatchObject({ code: 'too-large' });
    // Never drawn beyond the input pixel limit: larger outputs are enlarged from that.
    const bounded = await convert('/w=4000/a.svg', drawing, small);
    expect([bounded.width, bounded.height]).toEqual([4000, 2000]);
  });
});
