import { describe, expect, it } from 'vitest';
import { operations } from '@ukiyo/contract';
import { DEFAULT_LADDER, renditionsOf, rungFieldOf, rungSummary } from './ladder.ts';

describe('rendition ladder form', () => {
  it('turns the default ladder into a valid channel.add input', () => {
    const hls = renditionsOf(DEFAULT_LADDER);
    expect(hls[0]).toMatchObject({
      video: { width: 1280, height: 720, bps: 2_500_000 },
      audio: { bps: 96000 },
    });
    expect(operations['channel.add'].input.safeParse({ hls }).success).toBe(true);
  });

  it('maps the server’s field paths to the form’s', () => {
    expect(rungFieldOf('hls.1.video.bps')).toBe('hls.1.kbps');
    expect(rungFieldOf('hls.0.video.width')).toBe('hls.0.width');
    expect(rungFieldOf('hls.0.audio.bps')).toBe('hls.0.audioBps');
    expect(rungFieldOf('hls.2.durationSeconds')).toBe('hls.2.durationSeconds');
    expect(rungFieldOf('encryptKeyUri')).toBe('encryptKeyUri');
  });

  it('summarises a rung', () => {
    expect(rungSummary({ video: { width: 640, height: 360, fps: 30, bps: 800_000 } })).toBe(
      '640×360 30fps 800 kbps',
    );
  });
});
