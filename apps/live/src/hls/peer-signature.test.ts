import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { PEER_SIGNATURE_SECONDS, PeerSignature } from './peer-signature.ts';

describe('PeerSignature', () => {
  const peers = new PeerSignature(randomBytes(32));
  const target = '/hls/ch/abc/0/index.m3u8?_HLS_msn=4';
  const now = Date.UTC(2026, 10, 29, 12, 0, 0);

  it('takes what a peer signed, within its time', () => {
    const signature = peers.sign(target, now);
    expect(signature).toMatch(/^[0-9]+\.[A-Za-z0-9_-]{43}$/);
    expect(peers.verify(target, signature, now)).toBe(true);
    expect(peers.verify(target, signature, now + PEER_SIGNATURE_SECONDS * 1000)).toBe(true);
    // A peer whose clock runs ahead.
    expect(peers.verify(target, signature, now - PEER_SIGNATURE_SECONDS * 1000)).toBe(true);
  });

  it('refuses a signature replayed past its time, or moved to another time or target', () => {
    const signature = peers.sign(target, now);
    expect(peers.verify(target, signature, now + (PEER_SIGNATURE_SECONDS + 1) * 1000)).toBe(false);
    expect(peers.verify(target, signature, now - (PEER_SIGNATURE_SECONDS + 1) * 1000)).toBe(false);
    const [seconds, mac] = signature.split('.') as [string, string];
    expect(peers.verify(target, `${Number(seconds) + 1}.${mac}`, now)).toBe(false);
    expect(peers.verify(`${target}0`, signature, now)).toBe(false);
  });

  it('refuses another key’s signature and what is not a signature', () => {
    const other = new PeerSignature(randomBytes(32));
    expect(peers.verify(target, other.sign(target, now), now)).toBe(false);
    const mac = peers.sign(target, now).split('.')[1]!;
    for (const forged of [
      undefined,
      '',
      '1',
      mac,
      `.${mac}`,
      `x.${mac}`,
      `1e9.${mac}`,
      `${now / 1000}.${mac}.x`,
    ])
      expect(peers.verify(target, forged, now)).toBe(false);
  });
});
