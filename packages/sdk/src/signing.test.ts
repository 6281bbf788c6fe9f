import { verifySignature } from '@ukiyo/imaging/signing';
import { describe, expect, it } from 'vitest';
import { signUrl } from './signing.ts';

// The ImageFlux test vector (delivery-url.md section 4), as packages/imaging's tests use it.
const SECRET = 'testsigningsecret';
const VECTOR = '1.tiKX5u2kw6wp9zDgl1tLiOIi8IsoRIBw8fVgVc0yrNg=';

describe('signUrl', () => {
  it('matches the published test vector, for a URL and for a path', () => {
    expect(signUrl(SECRET, 'https://img.example.com/c/w=200/images/1.jpg')).toBe(
      `https://img.example.com/c/sig=${VECTOR},w=200/images/1.jpg`,
    );
    expect(signUrl(SECRET, '/c/w=200/images/1.jpg')).toBe(`/c/sig=${VECTOR},w=200/images/1.jpg`);
  });

  it('signs what the edge verifies, replacing an old signature', () => {
    const signed = signUrl(SECRET, 'https://img.example.com/w=120,f=webp/photos/a.jpg?x=1');
    const { pathname, search } = new URL(signed);
    expect(search).toBe('?x=1');
    expect(verifySignature(SECRET, pathname)).toBe(true);
    expect(verifySignature('another secret', pathname)).toBe(false);
    expect(signUrl(SECRET, `/c/sig=1.old,w=200/images/1.jpg`)).toBe(`/c/sig=${VECTOR},w=200/images/1.jpg`);
  });
});
