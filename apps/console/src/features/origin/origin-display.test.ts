import { describe, expect, it } from 'vitest';
import { hasCustomDomain, sourceAddress, statusName, statusReasonKey, tlsState } from './origin-display.ts';

describe('origin display', () => {
  it("shows the edge's reason references and the generic one for older text", () => {
    expect(statusReasonKey('originStatus.ruleInvalid|pattern=%2Fthumbs')).toBe(
      'originStatus.ruleInvalid|pattern=%2Fthumbs',
    );
    expect(statusReasonKey('the signing secret cannot be decrypted')).toBe('origin.statusReasonUnknown');
  });

  it('shows the source address of HTTP and S3 origins', () => {
    expect(
      sourceAddress({
        kind: 0,
        config: { scheme: 'https', host: 'images.example.com', pathPrefix: 'assets', rewriteHost: '' },
      }),
    ).toBe('https://images.example.com/assets');
    expect(
      sourceAddress({
        kind: 1,
        config: {
          accessKeyID: 'a',
          secretAccessKey: '',
          endPoint: 'https://s3.example.com/',
          region: 'x',
          bucket: 'photos',
          pathPrefix: '',
        },
      }),
    ).toBe('https://s3.example.com/photos');
  });

  it('names the status codes', () => {
    expect([0, 1, 2].map(statusName)).toEqual(['error', 'applied', 'updating']);
  });

  it('tells a custom domain from the generated name', () => {
    expect(hasCustomDomain({ name: 'abc.img.localhost', originName: 'abc.img.localhost' })).toBe(false);
    expect(hasCustomDomain({ name: 'abc.img.localhost', originName: 'img.example.com' })).toBe(true);
  });

  it('warns a month before a certificate expires', () => {
    const now = new Date('2026-11-22T00:00:00Z');
    const cert = (expiresAt: string) => ({ tlsCertificateId: 1, fingerprint: 'f', expiresAt });
    expect(tlsState(null, now)).toBe('notSet');
    expect(tlsState(cert('2026-11-21T00:00:00Z'), now)).toBe('expired');
    expect(tlsState(cert('2026-12-20T00:00:00Z'), now)).toBe('expiresSoon');
    expect(tlsState(cert('2027-02-01T00:00:00Z'), now)).toBe('valid');
  });
});
