import { describe, expect, it } from 'vitest';
import { Acl, clientAddress } from './acl.ts';

describe('Acl', () => {
  it('allows only listed addresses on an allow list', () => {
    const acl = Acl.compile({ isAllowList: true, cidrs: ['10.0.0.0/8', '2001:db8::/32', '192.0.2.7'] });
    expect(acl.allows('10.20.30.40')).toBe(true);
    expect(acl.allows('::ffff:10.1.1.1')).toBe(true);
    expect(acl.allows('2001:db8::1')).toBe(true);
    expect(acl.allows('192.0.2.7')).toBe(true);
    expect(acl.allows('192.0.2.8')).toBe(false);
    expect(acl.allows('not an address')).toBe(false);
  });

  it('refuses listed addresses on a deny list and allows everyone when empty', () => {
    const acl = Acl.compile({ isAllowList: false, cidrs: ['127.0.0.0/8', '::1'] });
    expect(acl.allows('127.0.0.1')).toBe(false);
    expect(acl.allows('::ffff:127.0.0.1')).toBe(false);
    expect(acl.allows('::1')).toBe(false);
    expect(acl.allows('192.0.2.1')).toBe(true);
    expect(Acl.compile({ isAllowList: false, cidrs: [] }).allows('anything')).toBe(true);
    expect(Acl.compile({ isAllowList: true, cidrs: [] }).allows('192.0.2.1')).toBe(false);
  });
});

describe('clientAddress', () => {
  it('takes the last X-Forwarded-For entry only behind a trusted proxy', () => {
    expect(clientAddress('127.0.0.1', '1.1.1.1, 2.2.2.2', false)).toBe('127.0.0.1');
    expect(clientAddress('127.0.0.1', '1.1.1.1, 2.2.2.2', true)).toBe('2.2.2.2');
    expect(clientAddress('127.0.0.1', undefined, true)).toBe('127.0.0.1');
  });
});
