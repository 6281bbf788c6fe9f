import { describe, expect, it } from 'vitest';
import { CaptureClock } from './capture-clock.ts';

describe('CaptureClock', () => {
  it('places timestamps by the least-delayed packet, through the 32-bit wrap', () => {
    const clock = new CaptureClock(90_000);
    const start = 2 ** 32 - 4500;
    // Frames 50 ms apart, made at 1000, 1050 and 1100, arriving 30, 10 and 50 ms later: each
    // placed as the least-delayed one arrived, 10 ms after it was made.
    clock.observe(start, 1_030);
    clock.observe((start + 4500) >>> 0, 1_060);
    clock.observe((start + 9000) >>> 0, 1_150);
    expect(clock.timestampAt(1_010)).toBe(start);
    expect(clock.timestampAt(1_110)).toBe(4500);
    // Before the first packet (a lower rung's frame, on the same clock, arrives behind it).
    expect(clock.timestampAt(910)).toBe((start - 9000) >>> 0);
  });

  it("follows a publisher's clock that runs slow: a least delay is forgotten after two windows", () => {
    const clock = new CaptureClock(1_000);
    clock.observe(0, 1_000);
    // Thereafter every packet arrives 20 ms later than the first one's delay would place it.
    for (let t = 100; t <= 30_000; t += 100) clock.observe(t, 1_020 + t);
    expect(clock.timestampAt(31_020)).toBe(30_000);
  });

  it('knows nothing before the first packet', () => {
    expect(new CaptureClock(48_000).timestampAt(0)).toBeUndefined();
  });
});
