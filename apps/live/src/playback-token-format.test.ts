import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  CheckedTokens,
  mintPlaybackToken,
  TokenSlots,
  verifyPlaybackToken,
} from './playback-token-format.ts';

describe('playback tokens', () => {
  const key = randomBytes(32);
  const inAnHour = new Date(Date.now() + 3_600_000);

  it('verifies for its channel until it expires', () => {
    const token = mintPlaybackToken(key, 'abc123', inAnHour);
    expect(verifyPlaybackToken(key, 'abc123', token)).toBe(true);
    expect(verifyPlaybackToken(key, 'abc124', token)).toBe(false);
    expect(verifyPlaybackToken(randomBytes(32), 'abc123', token)).toBe(false);
    expect(verifyPlaybackToken(key, 'abc123', token, inAnHour.getTime() + 1000)).toBe(false);
  });

  it('refuses a token whose expiry was changed, or that is no token', () => {
    const [expiry, signature] = mintPlaybackToken(key, 'abc123', inAnHour).split('.');
    expect(verifyPlaybackToken(key, 'abc123', `${Number(expiry) + 3600}.${signature}`)).toBe(false);
    expect(verifyPlaybackToken(key, 'abc123', '')).toBe(false);
    expect(verifyPlaybackToken(key, 'abc123', `${expiry}.short`)).toBe(false);
  });

  it("appends the token to a playlist's URIs but not to the key server's", () => {
    const playlist = [
      '#EXTM3U',
      '#EXT-X-KEY:METHOD=AES-128,URI="https://keys.example/key?kid=1"',
      '#EXT-X-MAP:URI="init.mp4"',
      '#EXTINF:1.000,',
      'seg1.ts',
      '#EXT-X-PART:DURATION=0.4,URI="p1.m4s",INDEPENDENT=YES #EXT-X-PART:DURATION=0.4,URI="p2.m4s"',
      '#EXT-X-PRELOAD-HINT:TYPE=PART,URI="seg2.ts?part=0"',
      '',
    ].join('\n');
    const slots = new TokenSlots(playlist);
    expect(slots.with('t.2').toString()).toContain('seg1.ts?token=t.2\n');
    expect(slots.with('t.1').toString()).toBe(
      [
        '#EXTM3U',
        '#EXT-X-KEY:METHOD=AES-128,URI="https://keys.example/key?kid=1"',
        '#EXT-X-MAP:URI="init.mp4?token=t.1"',
        '#EXTINF:1.000,',
        'seg1.ts?token=t.1',
        '#EXT-X-PART:DURATION=0.4,URI="p1.m4s?token=t.1",INDEPENDENT=YES #EXT-X-PART:DURATION=0.4,URI="p2.m4s?token=t.1"',
        '#EXT-X-PRELOAD-HINT:TYPE=PART,URI="seg2.ts?part=0&token=t.1"',
        '',
      ].join('\n'),
    );
  });

  it('remembers a valid token until it expires, and no invalid one', () => {
    const now = Date.now();
    const checked = new CheckedTokens(key, 'abc123');
    const token = mintPlaybackToken(key, 'abc123', new Date(now + 60_000));
    expect(checked.valid(token, now)).toBe(true);
    expect(checked.valid(token, now + 59_000)).toBe(true);
    expect(checked.valid(token, now + 61_000)).toBe(false);
    expect(checked.valid(`${token}x`, now)).toBe(false);
    expect(checked.valid(mintPlaybackToken(key, 'abc124', new Date(now + 60_000)), now)).toBe(false);
  });
});
