import { getBit } from 'werift';
import { describe, expect, it } from 'vitest';

/** werift 0.24.4's own getBit, as it was before the patch. */
function unpatchedGetBit(bits: number, startIndex: number, length = 1): number {
  let bin = bits.toString(2).split('');
  bin = [...(Array(8 - bin.length).fill('0') as string[]), ...bin];
  const s = bin.slice(startIndex, startIndex + length).join('');
  return Number.parseInt(s, 2);
}

/** What a call gives: its value, or the class of what it throws. */
function outcome(read: () => number): number | string {
  try {
    return read();
  } catch (error) {
    return (error as Error).constructor.name;
  }
}

describe("werift's getBit (patches/werift+0.24.4.patch)", () => {
  it('reads every field of every byte as werift did: RTP, SRTP and codec headers parse the same', () => {
    const differences: string[] = [];
    const compare = (bits: number, start: number, length: number) => {
      const patched = outcome(() => getBit(bits, start, length));
      const original = outcome(() => unpatchedGetBit(bits, start, length));
      if (!Object.is(patched, original))
        differences.push(`${bits} ${start} ${length}: ${patched} ${original}`);
    };
    for (let byte = 0; byte < 256; byte++)
      for (let start = 0; start <= 9; start++)
        for (let length = 0; length <= 9; length++) compare(byte, start, length);
    // Not a byte (past a packet's end, a wider value) or not whole bits: the original's answer
    // or exception.
    for (const bits of [undefined as unknown as number, 256, -1, 1.5])
      for (const [start, length] of [
        [0, 1],
        [1, 7],
      ] as const)
        compare(bits, start, length);
    for (const [start, length] of [
      [-1, 1],
      [1.5, 2],
      [2, -1],
    ] as const)
      compare(0b10110100, start, length);
    expect(differences).toEqual([]);
  });
});
