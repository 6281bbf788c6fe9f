import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { GeometryRequest } from './geometry';
import {
  clipBox,
  composeTurns,
  MAX_SIDE,
  place,
  planGeometry,
  rescaleSource,
  turnBox,
  turnSize,
  visibleBox,
  type Turn,
} from './geometry';

const env = { orientation: 1 as const, maxSide: MAX_SIDE, maxPixels: 50_000_000 };
const big = { width: 2000, height: 1500 };
const small = { width: 200, height: 150 };

function output(request: GeometryRequest, source = big, limits = env) {
  const plan = planGeometry(source, request, limits);
  return { scaled: plan.scaled, window: plan.window };
}

describe('resize', () => {
  it.each<[string, GeometryRequest, { width: number; height: number }]>([
    ['only w keeps the aspect ratio', { w: 400 }, { width: 400, height: 300 }],
    ['only h keeps the aspect ratio', { h: 300 }, { width: 400, height: 300 }],
    ['a=1 forces the box', { w: 400, h: 400 }, { width: 400, height: 400 }],
    ['a=0 fits inside', { w: 400, h: 400, a: 0 }, { width: 400, height: 300 }],
    ['a=2 fills the box', { w: 400, h: 400, a: 2 }, { width: 400, height: 400 }],
    ['a=3 pads to the box', { w: 400, h: 400, a: 3 }, { width: 400, height: 400 }],
    ['dpr multiplies', { w: 200, dpr: 2 }, { width: 400, height: 300 }],
    ['no size keeps the image', {}, big],
  ])('%s', (_, request, size) => {
    expect(output(request).window).toMatchObject(size);
  });

  it.each<[string, GeometryRequest, { width: number; height: number }]>([
    ['only w', { w: 400 }, { width: 200, height: 150 }],
    ['a=0', { w: 400, h: 400, a: 0 }, { width: 200, height: 150 }],
    ['a=1 caps each side', { w: 400, h: 100 }, { width: 200, height: 100 }],
    ['a=2 shows what there is', { w: 400, h: 400, a: 2 }, { width: 200, height: 150 }],
    ['a=3 still pads to the box', { w: 400, h: 400, a: 3 }, { width: 400, height: 400 }],
  ])('u=0 never enlarges: %s', (_, request, size) => {
    expect(output({ ...request, u: 0 }, small).window).toMatchObject(size);
    expect(output({ ...request, u: 0 }, small).scaled.width).toBeLessThanOrEqual(200);
  });

  it('crops by gravity and pads around the image', () => {
    expect(output({ w: 400, h: 400, a: 2 })).toEqual({
      scaled: { width: 533, height: 400 },
      window: { left: 66, top: 0, width: 400, height: 400 },
    });
    expect(output({ w: 400, h: 400, a: 2, g: 9 }).window.left).toBe(133);
    expect(output({ w: 400, h: 400, a: 3 }).window).toEqual({ left: 0, top: -50, width: 400, height: 400 });
    expect(output({ w: 400, h: 400, a: 3, g: 1 }).window).toEqual({
      left: 0,
      top: 0,
      width: 400,
      height: 400,
    });
    expect(output({ w: 400, h: 400, a: 3, g: 8 }).window).toEqual({
      left: 0,
      top: -100,
      width: 400,
      height: 400,
    });
  });

  it('centres an a=2 crop on the focal point as far as the image allows', () => {
    // 2000x1500 scaled to 533x400 for a 400x400 crop: the window slides along x only.
    expect(output({ w: 400, h: 400, a: 2, fp: { x: 0.5, y: 0.5 } }).window.left).toBe(67);
    expect(output({ w: 400, h: 400, a: 2, fp: { x: 0.6, y: 0.1 } }).window).toEqual({
      left: 120,
      top: 0,
      width: 400,
      height: 400,
    });
    expect(output({ w: 400, h: 400, a: 2, fp: { x: 0, y: 1 } }).window.left).toBe(0);
    expect(output({ w: 400, h: 400, a: 2, fp: { x: 1, y: 0 } }).window.left).toBe(133);
    // Portrait crop of a landscape image: 200x400 from 533x400; x=0.9 puts 480 px in the middle.
    expect(output({ w: 200, h: 400, a: 2, fp: { x: 0.9, y: 0.5 } }).window.left).toBe(333);
    expect(output({ w: 200, h: 400, a: 2, fp: { x: 0.7, y: 0.5 } }).window.left).toBe(273);
    // The focal point is a fraction of the image being fitted: after an input clip.
    const clipped = { ic: { unit: 'px' as const, rect: { x1: 1000, y1: 0, x2: 2000, y2: 1500 } } };
    // 1000x1500 covers 100x300 at 200x300: 0.6 of it is 120 px in.
    expect(output({ ...clipped, w: 100, h: 300, a: 2, fp: { x: 0.6, y: 0.5 } }).window).toEqual({
      left: 70,
      top: 0,
      width: 100,
      height: 300,
    });
    // Only crops: a fit, a pad or a box the image fills exactly ignore it.
    expect(output({ w: 400, h: 400, a: 3, fp: { x: 0, y: 0 } }).window.top).toBe(-50);
    expect(output({ w: 400, h: 300, a: 2, fp: { x: 0, y: 0 } }).window).toEqual({
      left: 0,
      top: 0,
      width: 400,
      height: 300,
    });
  });

  it('keeps the focal point in every a=2 crop', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 3000 }),
        fc.integer({ min: 1, max: 3000 }),
        fc.integer({ min: 1, max: 1000 }),
        fc.integer({ min: 1, max: 1000 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (width, height, w, h, x, y) => {
          const { scaled, window } = output({ w, h, a: 2, fp: { x, y } }, { width, height });
          const [px, py] = [x * scaled.width, y * scaled.height];
          expect(window.left).toBeGreaterThanOrEqual(0);
          expect(window.top).toBeGreaterThanOrEqual(0);
          expect(window.left + window.width).toBeLessThanOrEqual(scaled.width);
          expect(window.top + window.height).toBeLessThanOrEqual(scaled.height);
          // Inside the window, up to the pixel the point falls in.
          expect(px).toBeGreaterThanOrEqual(window.left - 1);
          expect(px).toBeLessThanOrEqual(window.left + window.width + 1);
          expect(py).toBeGreaterThanOrEqual(window.top - 1);
          expect(py).toBeLessThanOrEqual(window.top + window.height + 1);
        },
      ),
    );
  });

  it('leaves a smart crop to sharp: the window has its size, the plan names the strategy', () => {
    const plan = planGeometry(big, { w: 400, h: 400, a: 2, g: 'attention' }, env);
    expect(plan.strategy).toBe('attention');
    expect(plan.window).toMatchObject({ width: 400, height: 400 });
    expect(plan.scaled).toEqual({ width: 533, height: 400 });
    // Nothing to crop, or no crop mode: no strategy, the centre stands for it.
    expect(planGeometry(big, { w: 400, h: 300, a: 2, g: 'entropy' }, env).strategy).toBeUndefined();
    expect(planGeometry(big, { w: 400, h: 400, a: 3, g: 'entropy' }, env)).toMatchObject({
      window: { left: 0, top: -50 },
    });
    expect(planGeometry(big, { w: 400, a: 2, g: 'entropy' }, env).strategy).toBeUndefined();
  });

  it('scales the crop with a source drawn at another size', () => {
    const plan = planGeometry({ width: 100, height: 50 }, { w: 400 }, env);
    expect(rescaleSource(plan, { width: 400, height: 200 }).crop).toEqual({
      left: 0,
      top: 0,
      width: 400,
      height: 200,
    });
    const clipped = planGeometry(
      { width: 100, height: 50 },
      { ic: { unit: 'px', rect: { x1: 10, y1: 5, x2: 60, y2: 30 } }, w: 200 },
      env,
    );
    const drawn = rescaleSource(clipped, { width: 300, height: 150 });
    expect(drawn.crop).toEqual({ left: 30, top: 15, width: 150, height: 75 });
    expect(drawn.scaled).toEqual(clipped.scaled);
    expect(drawn.window).toEqual(clipped.window);
  });

  it('clamps sizes to the limits', () => {
    expect(output({ w: 10000, h: 100 }).window).toMatchObject({ width: 8192, height: 81 });
    expect(output({ w: 9000 }, big, { ...env, maxPixels: 100_000_000 }).window).toMatchObject({
      width: 8192,
      height: 6144,
    });
    expect(output({ w: 9000 }).window).toMatchObject({ width: 8164, height: 6123 });
    expect(output({ w: 400 }, big, { ...env, maxPixels: 10_000 }).window).toMatchObject({
      width: 115,
      height: 86,
    });
    const thin = output({ w: 8192, h: 1, a: 2 }, { width: 1, height: 8000 });
    expect(thin.scaled.height).toBeLessThanOrEqual(8192);
    expect(thin.window).toMatchObject({ width: 1, height: 1 });
  });
});

describe('clips and rotations', () => {
  it('measures clips from their gravity', () => {
    const size = { width: 100, height: 50 };
    const rect = { x1: 0, y1: 0, x2: 10, y2: 10 };
    expect(clipBox({ unit: 'px', rect }, 1, size, 'ic')).toEqual({ left: 0, top: 0, width: 10, height: 10 });
    expect(clipBox({ unit: 'px', rect }, 9, size, 'ic')).toEqual({
      left: 90,
      top: 40,
      width: 10,
      height: 10,
    });
    expect(clipBox({ unit: 'px', rect }, 5, size, 'ic')).toEqual({
      left: 50,
      top: 25,
      width: 10,
      height: 10,
    });
    expect(clipBox({ unit: 'px', rect: { x1: -10, y1: -5, x2: 10, y2: 5 } }, 5, size, 'ic')).toEqual({
      left: 40,
      top: 20,
      width: 20,
      height: 10,
    });
    expect(clipBox({ unit: 'ratio', rect: { x1: 0.5, y1: 0, x2: 1, y2: 0.5 } }, 1, size, 'ic')).toEqual({
      left: 50,
      top: 0,
      width: 50,
      height: 25,
    });
    expect(clipBox({ unit: 'px', rect: { x1: 90, y1: 0, x2: 200, y2: 100 } }, 1, size, 'ic')).toEqual({
      left: 90,
      top: 0,
      width: 10,
      height: 50,
    });
    expect(() => clipBox({ unit: 'px', rect: { x1: 100, y1: 0, x2: 200, y2: 10 } }, 1, size, 'oc')).toThrow(
      'oc lies outside the image',
    );
  });

  it('clips the input before resizing and the output after', () => {
    expect(
      planGeometry(big, { ic: { unit: 'px', rect: { x1: 0, y1: 0, x2: 1000, y2: 500 } }, w: 100 }, env),
    ).toMatchObject({
      crop: { left: 0, top: 0, width: 1000, height: 500 },
      scaled: { width: 100, height: 50 },
      window: { left: 0, top: 0, width: 100, height: 50 },
    });
    const plan = planGeometry(
      big,
      { w: 400, oc: { unit: 'px', rect: { x1: 0, y1: 0, x2: 100, y2: 50 } }, or: 6 },
      env,
    );
    expect(plan).toMatchObject({ scaled: { width: 400, height: 300 }, turn: { flop: false, angle: 90 } });
    expect(plan.window).toEqual({ left: 250, top: 0, width: 50, height: 100 });
  });

  it('rotates the input before resizing', () => {
    const plan = planGeometry(big, { ir: 6, w: 300 }, env);
    expect(plan.scaled).toEqual({ width: 400, height: 300 });
    expect(plan.window).toEqual({ left: 0, top: 0, width: 300, height: 400 });
    expect(planGeometry(big, { ir: 'auto', w: 300 }, { ...env, orientation: 8 }).window).toMatchObject({
      width: 300,
      height: 400,
    });
  });

  it('keeps padding in place through an output rotation', () => {
    const plan = planGeometry(big, { w: 400, h: 400, a: 3, g: 8, or: 6 }, env);
    expect(plan.window).toEqual({ left: 0, top: 0, width: 400, height: 400 });
    expect(visibleBox(plan)).toEqual({ left: 0, top: 0, width: 300, height: 400 });
  });

  const turnArb = fc.record({
    flop: fc.boolean(),
    angle: fc.constantFrom(0 as const, 90 as const, 180 as const, 270 as const),
  });
  it('composes turns like applying one after the other', () => {
    fc.assert(
      fc.property(
        turnArb,
        turnArb,
        fc.record({ width: fc.integer({ min: 1, max: 50 }), height: fc.integer({ min: 1, max: 50 }) }),
        fc.nat(49),
        fc.nat(49),
        (first: Turn, then: Turn, size, x, y) => {
          const box = { left: x % size.width, top: y % size.height, width: 1, height: 1 };
          const stepwise = turnBox(turnBox(box, size, first), turnSize(size, first), then);
          expect(turnBox(box, size, composeTurns(first, then))).toEqual(stepwise);
        },
      ),
    );
  });
});

describe('place', () => {
  const base = { width: 400, height: 300 };
  const item = { width: 100, height: 50 };
  it('puts overlays at their gravity, offsets pointing inwards', () => {
    expect(place({}, base, item)).toEqual({ left: 150, top: 125, ...item });
    expect(place({ lg: 1, x: 10, y: 20 }, base, item)).toEqual({ left: 10, top: 20, ...item });
    expect(place({ lg: 9, x: 10, y: 20 }, base, item)).toEqual({ left: 290, top: 230, ...item });
    expect(place({ lg: 3, xr: 0.1, yr: 0.1 }, base, item)).toEqual({ left: 260, top: 30, ...item });
  });
});
