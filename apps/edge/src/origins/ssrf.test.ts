import { describe, expect, it } from 'vitest';
import { OriginError } from './errors.ts';
import { checkLiteralHost, guardedLookup } from './ssrf.ts';

describe('the SSRF guard', () => {
  it('checks IP literals, which never reach the DNS lookup', () => {
    expect(() => checkLiteralHost('169.254.169.254', false)).toThrow(OriginError);
    expect(() => checkLiteralHost('[::1]', false)).toThrow(OriginError);
    expect(() => checkLiteralHost('127.0.0.1', true)).not.toThrow();
    expect(() => checkLiteralHost('example.com', false)).not.toThrow();
    expect(() => checkLiteralHost('[2606:4700:4700::1111]', false)).not.toThrow();
  });

  it('refuses names resolving to private addresses after resolution', async () => {
    const lookup = guardedLookup(false);
    const error = await new Promise<unknown>((resolve) => lookup('localhost', {}, (err) => resolve(err)));
    expect(error).toBeInstanceOf(OriginError);
    const allowed = await new Promise<unknown>((resolve) =>
      guardedLookup(true)('localhost', {}, (err, address) => resolve(err ?? address)),
    );
    expect(allowed).toMatch(/^(127\.0\.0\.1|::1)$/);
  });
});
