import { describe, expect, it } from 'vitest';
import { Budget } from './budget';
import { ImagingError } from './errors';

describe('Budget', () => {
  it('refuses the charge that passes the limit, naming what it was for', () => {
    const budget = new Budget({ maxCost: 100, timeoutMs: 0 });
    budget.charge(60, 'decoding');
    expect(() => budget.charge(50, 'filters')).toThrow(
      expect.objectContaining({ code: 'too-costly', message: expect.stringContaining('(filters)') }),
    );
  });

  it('has no limit at 0', () => {
    const budget = new Budget({ maxCost: 0, timeoutMs: 0 });
    budget.charge(1e9, 'anything');
    expect(budget.cost).toBe(1e9);
    expect(budget.secondsLeft()).toBe(0);
  });

  it('counts whole seconds to the deadline, and refuses past it', () => {
    let now = 1_000;
    const budget = new Budget({ maxCost: 0, timeoutMs: 2_500 }, () => now);
    expect(budget.secondsLeft()).toBe(3);
    now += 2_000;
    expect(budget.secondsLeft()).toBe(1);
    now += 500;
    expect(() => budget.secondsLeft()).toThrow(ImagingError);
  });

  it('prices a 12 MP GIF far above a 12 MP JPEG', () => {
    const price = (format: 'gif' | 'jpeg') => {
      const budget = new Budget({ maxCost: 0, timeoutMs: 0 });
      const size = { width: 4000, height: 3000 };
      const plan = {
        source: size,
        crop: { left: 0, top: 0, ...size },
        scaled: size,
        turn: { flop: false, angle: 0 as const },
        window: { left: 0, top: 0, ...size },
      };
      budget.chargeBase({ format: 'jpeg', size, frames: 1 }, plan, {}, format);
      return budget.cost;
    };
    expect(price('jpeg')).toBeLessThan(700);
    expect(price('gif')).toBeGreaterThan(10_000);
  });

  it("charges an overlay's compositing and a text's once per frame of the base", () => {
    const layer = { width: 1000, height: 1000 };
    const overlay = (frames: number) => {
      const budget = new Budget({ maxCost: 0, timeoutMs: 0 });
      budget.chargeOverlay({ format: 'png', size: layer }, layer, undefined, frames);
      return budget.cost;
    };
    const text = (frames: number) => {
      const budget = new Budget({ maxCost: 0, timeoutMs: 0 });
      budget.chargeText({ text: 'a' }, layer, frames);
      return budget.cost;
    };
    // Decoding the overlay (19 per MP) and drawing the text (100) once; compositing (25) each time.
    expect(overlay(10) - overlay(1)).toBe(9 * 25);
    expect(text(10) - text(1)).toBe(9 * 25);
  });

  it('counts milliseconds to the deadline for ffmpeg, and refuses past it', () => {
    let now = 0;
    const budget = new Budget({ maxCost: 0, timeoutMs: 2_500 }, () => now);
    now += 1_000;
    expect(budget.millisecondsLeft()).toBe(1_500);
    now += 1_500;
    expect(() => budget.millisecondsLeft()).toThrow(expect.objectContaining({ code: 'timeout' }));
    expect(new Budget({ maxCost: 0, timeoutMs: 0 }).millisecondsLeft()).toBe(Infinity);
  });
});
