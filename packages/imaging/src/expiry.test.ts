import { describe, expect, it } from 'vitest';
import { cachePolicy, formatExpires, isExpired, parseExpires } from './expiry';

const at = (iso: string) => Date.parse(iso) / 1000;

describe('expires', () => {
  it('parses RFC 3339 instants to Unix seconds', () => {
    expect(parseExpires('2030-01-02T03:04:05Z')).toBe(at('2030-01-02T03:04:05Z'));
    expect(parseExpires('2030-01-02T12:04:05+09:00')).toBe(at('2030-01-02T03:04:05Z'));
    expect(parseExpires('2030-01-02t03:04:05.999z')).toBe(at('2030-01-02T03:04:05Z'));
    expect(parseExpires('2024-02-29T00:00:00Z')).toBe(at('2024-02-29T00:00:00Z'));
  });

  it('refuses anything else', () => {
    for (const bad of [
      '2030-01-02',
      '2030-01-02 03:04:05Z',
      '2030-13-01T00:00:00Z',
      '2023-02-29T00:00:00Z',
      '2030-01-01T24:00:00Z',
      '2030-01-01T00:60:00Z',
      '2030-01-01T00:00:60Z',
      '2030-01-01T00:00:00+24:00',
      '1969-12-31T23:59:59Z',
      '2030-01-01T00:00:00',
    ]) {
      expect(parseExpires(bad), bad).toBeNull();
    }
  });

  it('prints what it parses', () => {
    expect(formatExpires(at('2030-01-02T03:04:05Z'))).toBe('2030-01-02T03:04:05Z');
    expect(formatExpires(parseExpires('9999-12-31T23:59:59Z') ?? 0)).toBe('9999-12-31T23:59:59Z');
  });

  it('is expired from the instant on', () => {
    const expires = at('2030-01-01T00:00:00Z');
    expect(isExpired(expires, new Date('2029-12-31T23:59:59Z'))).toBe(false);
    expect(isExpired(expires, new Date('2030-01-01T00:00:00Z'))).toBe(true);
    expect(isExpired(undefined, new Date())).toBe(false);
  });
});

describe('cachePolicy', () => {
  const now = new Date('2030-01-01T00:00:00Z');

  it('falls back to defaultCache without origin headers', () => {
    expect(cachePolicy({ now, defaultCacheSeconds: 600 })).toEqual({
      maxAge: 600,
      cacheControl: 'public, max-age=600',
      expires: 'Tue, 01 Jan 2030 00:10:00 GMT',
    });
    expect(cachePolicy({ now, defaultCacheSeconds: 0 })).toMatchObject({
      maxAge: 0,
      cacheControl: 'no-cache',
    });
  });

  it('follows the origin headers, max-age before Expires', () => {
    expect(
      cachePolicy({ now, defaultCacheSeconds: 600, originCacheControl: 'public, max-age=60' }).maxAge,
    ).toBe(60);
    expect(
      cachePolicy({ now, defaultCacheSeconds: 0, originCacheControl: 's-maxage=30, max-age=60' }).maxAge,
    ).toBe(30);
    expect(
      cachePolicy({
        now,
        defaultCacheSeconds: 600,
        originCacheControl: 'max-age=60',
        originExpires: 'Tue, 01 Jan 2030 00:00:10 GMT',
      }).maxAge,
    ).toBe(60);
    expect(
      cachePolicy({ now, defaultCacheSeconds: 600, originExpires: 'Tue, 01 Jan 2030 00:00:10 GMT' }).maxAge,
    ).toBe(10);
    expect(cachePolicy({ now, defaultCacheSeconds: 600, originExpires: 'garbage' }).maxAge).toBe(0);
    expect(cachePolicy({ now, defaultCacheSeconds: 600, originCacheControl: 'max-age=abc' }).maxAge).toBe(0);
    expect(
      cachePolicy({ now, defaultCacheSeconds: 600, originCacheControl: 'private, max-age=60' }),
    ).toMatchObject({
      maxAge: 0,
      cacheControl: 'no-cache',
    });
    expect(cachePolicy({ now, defaultCacheSeconds: 600, originCacheControl: 'no-store' })).toMatchObject({
      maxAge: 0,
      cacheControl: 'no-store',
    });
  });

  it('counts the origin Age against its freshness, and Expires from its Date', () => {
    expect(
      cachePolicy({ now, defaultCacheSeconds: 600, originCacheControl: 'max-age=60', originAge: '45' })
        .maxAge,
    ).toBe(15);
    expect(
      cachePolicy({ now, defaultCacheSeconds: 600, originCacheControl: 'max-age=60', originAge: '90' }),
    ).toMatchObject({ maxAge: 0, cacheControl: 'no-cache' });
    // Without cache headers defaultCache is the lifetime, and the Age still counts.
    expect(cachePolicy({ now, defaultCacheSeconds: 600, originAge: '100' }).maxAge).toBe(500);
    // An origin whose clock runs an hour behind: Expires counts from its own Date.
    expect(
      cachePolicy({
        now,
        defaultCacheSeconds: 600,
        originDate: 'Mon, 31 Dec 2029 23:00:00 GMT',
        originExpires: 'Mon, 31 Dec 2029 23:02:00 GMT',
      }).maxAge,
    ).toBe(120);
  });

  it('honours s-maxage and no-cache as a shared cache does', () => {
    expect(
      cachePolicy({ now, defaultCacheSeconds: 600, originCacheControl: 'max-age=0, s-maxage=300' }).maxAge,
    ).toBe(300);
    expect(
      cachePolicy({ now, defaultCacheSeconds: 600, originCacheControl: 'no-cache, max-age=60' }),
    ).toMatchObject({ maxAge: 0, cacheControl: 'no-cache' });
    expect(cachePolicy({ now, defaultCacheSeconds: 600, originCacheControl: 'public' }).maxAge).toBe(600);
  });

  it('bounds serving a stale copy by stale-if-error, and refuses it under must-revalidate', () => {
    expect(cachePolicy({ now, defaultCacheSeconds: 600 }).staleIfError).toBeUndefined();
    expect(
      cachePolicy({ now, defaultCacheSeconds: 0, originCacheControl: 'max-age=60, stale-if-error=300' })
        .staleIfError,
    ).toBe(300);
    expect(
      cachePolicy({ now, defaultCacheSeconds: 0, originCacheControl: 'max-age=60, stale-if-error=soon' })
        .staleIfError,
    ).toBe(0);
    expect(
      cachePolicy({
        now,
        defaultCacheSeconds: 0,
        originCacheControl: 'max-age=60, must-revalidate, stale-if-error=300',
      }).staleIfError,
    ).toBe(0);
  });

  it('lets the expires parameter win when it comes first', () => {
    const expires = at('2030-01-01T00:00:30Z');
    expect(cachePolicy({ now, defaultCacheSeconds: 600, expires })).toMatchObject({
      maxAge: 30,
      expires: 'Tue, 01 Jan 2030 00:00:30 GMT',
    });
    expect(
      cachePolicy({ now, defaultCacheSeconds: 600, originCacheControl: 'max-age=5', expires }).maxAge,
    ).toBe(5);
    expect(cachePolicy({ now, defaultCacheSeconds: 600, expires: at('2029-01-01T00:00:00Z') }).maxAge).toBe(
      0,
    );
  });
});
