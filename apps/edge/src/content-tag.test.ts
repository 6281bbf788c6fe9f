import { randomBytes } from 'node:crypto';
import xxhash from 'xxhash-wasm';
import { describe, expect, it } from 'vitest';
import { contentTag } from './content-tag.ts';

describe('contentTag', () => {
  it('is the xxHash64 of the whole bytes, whatever pieces they are fed in', async () => {
    const { h64Raw } = await xxhash();
    for (const size of [0, 1, 65_535, 65_536, 65_537, 300_000]) {
      const data = randomBytes(size);
      expect(contentTag(data)).toBe(`"${h64Raw(data).toString(16).padStart(16, '0')}"`);
    }
  });

  it('changes with any one byte', () => {
    const data = randomBytes(200_000);
    const tag = contentTag(data);
    for (const at of [0, 65_536, 199_999]) {
      const changed = Buffer.from(data);
      changed[at]! ^= 1;
      expect(contentTag(changed)).not.toBe(tag);
    }
    expect(contentTag(data)).toMatch(/^"[0-9a-f]{16}"$/);
  });
});
