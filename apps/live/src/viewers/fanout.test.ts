import { describe, expect, it } from 'vitest';
import { h264KeyframeStart, vp8KeyframeStart } from './fanout.ts';

describe('keyframe starts', () => {
  it('starts H.264 at the SPS, alone or first in a STAP-A, not at a slice', () => {
    expect(h264KeyframeStart(Buffer.from([0x67, 0x42, 0xe0, 0x1f]))).toBe(true);
    // STAP-A: size 4, SPS; size 2, PPS.
    expect(h264KeyframeStart(Buffer.from([0x78, 0, 4, 0x67, 0x42, 0xe0, 0x1f, 0, 2, 0x68, 0xce]))).toBe(true);
    // An IDR slice without its parameter sets, its FU-A start, and a P slice.
    expect(h264KeyframeStart(Buffer.from([0x65, 0x88]))).toBe(false);
    expect(h264KeyframeStart(Buffer.from([0x7c, 0x85, 0x88]))).toBe(false);
    expect(h264KeyframeStart(Buffer.from([0x41, 0x9a]))).toBe(false);
  });

  it("starts VP8 at a keyframe's first packet only", () => {
    // Descriptor: X=1, S=1, PID 0; I=1 with a 15-bit picture id; then the payload header.
    const keyframe = Buffer.from([0x90, 0x80, 0x80, 0x01, 0x10, 0x02, 0x00]);
    const interframe = Buffer.from([0x90, 0x80, 0x80, 0x02, 0x11, 0x02, 0x00]);
    const continuation = Buffer.from([0x80, 0x80, 0x80, 0x01, 0x10]);
    expect(vp8KeyframeStart(keyframe)).toBe(true);
    expect(vp8KeyframeStart(interframe)).toBe(false);
    expect(vp8KeyframeStart(continuation)).toBe(false);
  });
});
