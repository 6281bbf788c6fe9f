import { describe, expect, it } from 'vitest';
import { encryptKeyUrl, LIVE_TARGETS, Rendition, roundAudioBitrate } from './live-api.ts';

describe('live API rules', () => {
  it('rounds audio bitrates down to an allowed one, 32000 at least', () => {
    expect(roundAudioBitrate(96000)).toBe(96000);
    expect(roundAudioBitrate(100_000)).toBe(96000);
    expect(roundAudioBitrate(31_999)).toBe(32000);
    expect(roundAudioBitrate(0)).toBe(32000);
    expect(roundAudioBitrate(1_000_000)).toBe(320000);
    expect(roundAudioBitrate(57_000)).toBe(56000);
  });

  it('fills rendition defaults and bounds sizes', () => {
    expect(Rendition.parse({ video: { width: 36, height: 4096 } })).toEqual({
      durationSeconds: 1,
      video: { width: 36, height: 4096, fps: 30, bps: 1_000_000, codec: 'h264_high' },
      audio: { bps: 96000 },
      archive: { archive_destination_id: '' },
    });
    const refused = Rendition.safeParse({ video: { width: 35, height: 4097, codec: 'h265' } });
    expect(refused.error?.issues.map((issue) => [issue.path.join('.'), issue.message])).toEqual([
      ['video.width', 'validation.between|min=36&max=4096'],
      ['video.height', 'validation.between|min=36&max=4096'],
      ['video.codec', 'validation.invalid'],
    ]);
  });

  it('accepts only http(s) webhook and key URIs', () => {
    const create = LIVE_TARGETS['ImageFlux_20200316.CreateMultistreamChannel'].request;
    expect(create.safeParse({ auth_webhook_url: 'https://hooks.example.com/a' }).success).toBe(true);
    expect(create.safeParse({ auth_webhook_url: 'file:///etc/passwd' }).success).toBe(false);
    expect(create.parse({})).toEqual({
      auth_webhook_url: '',
      event_webhook_url: '',
      playback_token_required: false,
    });
    expect(create.safeParse({ playback_token_required: 'yes' }).success).toBe(false);
  });

  it('adds the key id to the key URI with ? or &', () => {
    expect(encryptKeyUrl('https://k.example.com/key', 'abc')).toBe('https://k.example.com/key?kid=abc');
    expect(encryptKeyUrl('https://k.example.com/key?v=1', 'abc')).toBe(
      'https://k.example.com/key?v=1&kid=abc',
    );
  });
});
