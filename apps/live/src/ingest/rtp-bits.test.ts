import { getBit } from 'werift';
import { describe, expect, it } from 'vitest';

/** werift 0.24.4's own getBit: the byte as a binary string, padded to 8, sliced and parsed. */
function unpatchedGetBit(bits: number, startIndex: number, length = 1): number {
  const bin = bits.toString(2).padStart(8, '0');
  return Number.parseInt(bin.slice(startIndex, startIndex + length), 2);
}

describe("werift's getBit (patches/werift+0.24.4.patch)", () => {
  it('reads every field of every byte as werift did: RTP, SRTP and codec headers parse the same', () => {
    const differences: string[] = [];
    for (let byte = 0; byte < 256; byte++)
      for (let start = 0; start <= 9; start++)
        for (let length = 0; length <= 9; length++)
          if (!Object.is(getBit(byte, start, length), unpatchedGetBit(byte, start, length)))
            differences.push(`${byte} ${start} ${length}`);
    expect(differences).toEqual([]);
  });
});
