import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { surrogateKeys } from './surrogate-keys.ts';

describe('surrogateKeys', () => {
  it('names the origin and the image, as the docs tell CDN users to compute them', () => {
    const hash = createHash('sha256').update('/images/photo.jpg').digest('hex').slice(0, 16);
    expect(surrogateKeys(42, '/images/photo.jpg')).toEqual({
      spaced: `o42 o42-${hash}`,
      commas: `o42,o42-${hash}`,
    });
  });

  it("gives the keys of the console docs' worked example (general/api-reference.md)", () => {
    expect(surrogateKeys(42, '/photos/cat.jpg')).toEqual({
      spaced: 'o42 o42-d377ef494a468618',
      commas: 'o42,o42-d377ef494a468618',
    });
  });

  it('keeps origins apart and stays short ASCII for any path', () => {
    const path = `/${'ü'.repeat(500)}%20x.jpg`;
    const one = surrogateKeys(1, path);
    const other = surrogateKeys(11, path);
    expect(one.spaced.split(' ')[0]).toBe('o1');
    expect(other.spaced.split(' ')[1]!.startsWith('o11-')).toBe(true);
    expect(one.commas).toMatch(/^o1,o1-[0-9a-f]{16}$/);
    expect(surrogateKeys(1, '/a.jpg').spaced).not.toBe(surrogateKeys(1, '/b.jpg').spaced);
  });
});
