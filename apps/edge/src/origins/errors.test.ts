import { describe, expect, it } from 'vitest';
import { OriginError, readLimited } from './errors.ts';

async function* chunks(...sizes: number[]): AsyncIterable<Uint8Array> {
  for (const [i, size] of sizes.entries()) yield Buffer.alloc(size, i + 1);
}

describe('readLimited', () => {
  it('reads a declared length into one buffer, and an undeclared one whole', async () => {
    const declared = await readLimited(chunks(3, 2), 10, 'image', 5);
    expect([...declared]).toEqual([1, 1, 1, 2, 2]);
    expect([...(await readLimited(chunks(3, 2), 10, 'image'))]).toEqual([1, 1, 1, 2, 2]);
    // A body cut short is what arrived.
    expect((await readLimited(chunks(3), 10, 'image', 5)).length).toBe(3);
  });

  it('refuses a body past the limit, or past the length it declared', async () => {
    await expect(readLimited(chunks(6, 6), 10, 'image')).rejects.toMatchObject({ kind: 'too-large' });
    await expect(readLimited(chunks(3, 3), 10, 'image', 5)).rejects.toBeInstanceOf(OriginError);
    // A declared length past the limit is read as undeclared, and refused at the limit.
    await expect(readLimited(chunks(6, 6), 10, 'image', 12)).rejects.toMatchObject({ kind: 'too-large' });
  });
});
