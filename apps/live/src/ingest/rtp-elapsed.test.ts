import { describe, expect, it } from 'vitest';
import { RtpHeader, RtpPacket } from 'werift';
import { RtpElapsedCallback } from './rtp-elapsed.ts';

/** The times the callback gives packets of these timestamps, in turn. */
function times(clockRate: number, timestamps: number[]): number[] {
  const callback = new RtpElapsedCallback(clockRate);
  const out: number[] = [];
  callback.pipe((output) => output.time !== undefined && out.push(output.time));
  for (const [i, timestamp] of timestamps.entries()) {
    callback.input({ rtp: new RtpPacket(new RtpHeader({ timestamp, sequenceNumber: i }), Buffer.alloc(1)) });
  }
  return out;
}

describe('RtpElapsedCallback', () => {
  it('keeps a minute of 30 fps video a minute long (werift lost a third of a millisecond a frame)', () => {
    const frames = Array.from({ length: 1801 }, (_, i) => 1000 + i * 3000);
    expect(times(90_000, frames).at(-1)).toBe(60_000);
  });

  it('counts through the 32-bit wrap, and back for a packet behind the last', () => {
    const start = 2 ** 32 - 1500;
    expect(times(90_000, [start, (start + 3000) >>> 0, (start + 6000) >>> 0, (start + 4500) >>> 0])).toEqual([
      0, 33, 67, 50,
    ]);
  });

  it('times 2.5 ms Opus frames exactly', () => {
    const frames = Array.from({ length: 401 }, (_, i) => i * 120);
    expect(times(48_000, frames).at(-1)).toBe(1_000);
  });
});
