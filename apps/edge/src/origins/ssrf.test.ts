import { describe, expect, it } from 'vitest';
import { OriginError } from './errors.ts';
import { checkLiteralHost, guardedLookup, isPublicAddress } from './ssrf.ts';

describe('the SSRF guard', () => {
  it('accepts only globally routable unicast addresses', () => {
    for (const address of ['8.8.8.8', '93.184.216.34', '2606:4700::1111'])
      expect(isPublicAddress(address), address).toBe(true);
    const refused = [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '224.0.0.1',
      '::1',
      '::',
      'fd00:ec2::254',
      'fe80::1',
      '::ffff:127.0.0.1',
      '::ffff:169.254.169.254',
      'nonsense',
    ];
    for (const address of refused) expect(isPublicAddress(address), address).toBe(false);
  });

  it('checks IP literals, which never reach the DNS lookup', () => {
    expect(() => checkLiteralHost('169.254.169.254', false)).toThrow(OriginError);
    expect(() => checkLiteralHost('[::1]', false)).toThrow(OriginError);
    expect(() => checkLiteralHost('127.0.0.1', true)).not.toThrow();
    expect(() => checkLiteralHost('example.com', false)).not.toThrow();
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
