import { describe, expect, it } from 'vitest';
import { addressLiteral, isPublicAddress } from './addresses.ts';

describe('address classification', () => {
  it('accepts only globally routable unicast addresses', () => {
    for (const address of ['8.8.8.8', '93.184.216.34', '2606:4700::1111', '2606:4700:4700::1111'])
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
      '2002:7f00:1::1',
      '2001:0:4136:e378:8000:63bf:3fff:fdd2',
      '64:ff9b::7f00:1',
      'nonsense',
    ];
    for (const address of refused) expect(isPublicAddress(address), address).toBe(false);
  });

  it('reads address literals out of URL hostnames and leaves names alone', () => {
    expect(addressLiteral('[2606:4700:4700::1111]')).toBe('2606:4700:4700::1111');
    expect(addressLiteral('169.254.169.254')).toBe('169.254.169.254');
    expect(addressLiteral('example.com')).toBeNull();
  });
});
