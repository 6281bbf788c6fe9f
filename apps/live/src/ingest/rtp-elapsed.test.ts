import { describe, expect, it } from 'vitest';
import { RtpHeader, RtpPacket } from 'werift';
import { RtpElapsedCallback } from './rtp-elapsed.ts';

/** The callback, given packets of these timestamps in turn, and the times it gave them. */
function timed(clockRate: number, timestamps: number[]): { callback: RtpElapsedCallback; times: number[] } {
  const callback = new RtpElapsedCallback(clockRate);
  const times: number[] = [];
  callback.pipe((output) => output.time !== undefined && times.push(output.time));
  for (const [i, timestamp] of timestamps.entries()) {
    callback.input({ rtp: new RtpPacket(new RtpHeader({ timestamp, sequenceNumber: i }), Buffer.alloc(1)) });
  }
  return { callback, times };
}

const times = (clockRate: number, timestamps: number[]) => timed(clockRate, timestamps).times;

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

  it('gives back the timestamp of a time it gave, through the wrap', () => {
    const start = 2 ** 32 - 1500;
    const { callback, times: given } = timed(90_000, [start, (start + 3000) >>> 0, (start + 6000) >>> 0]);
    expect(given.map((ms) => callback.timestampAt(ms))).toEqual([start, (start + 2970) >>> 0, 4530]);
  });
});
