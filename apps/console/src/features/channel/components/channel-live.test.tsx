import { cleanup, fireEvent, screen, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Permission } from '@ukiyo/contract';
import { flash } from '@/lib/flash.ts';
import { member } from '@/testing/fixtures.ts';
import { renderPage } from '@/testing/render-page.tsx';
import { ChannelLive } from './channel-live.tsx';
import type { ChannelView } from './channel-types.ts';

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  flash.advance();
  flash.advance();
});

const STREAM_KEY = '0123456789abcdef0123.Zm9vYmFyYmF6cXV4cXV1eGNvcmdlZ3JhdWx0';
const SRT_URL =
  'srt://live.example.com:8890?streamid=0123456789abcdef0123&passphrase=Zm9vYmFyYmF6cXV4cXV1eGNvcmdl';

const channel = (rtmpsUrl: string | null): ChannelView => ({
  id: '0123456789abcdef0123',
  createdAt: '2026-11-01T00:00:00.000Z',
  activeConnectionCount: 0,
  onAir: false,
  hlsUrl: null,
  status: 'normal',
  settings: {},
  liveParams: {
    connectionId: null,
    kid: null,
    whipUrl: 'https://live.example.com/whip/0123456789abcdef0123',
    soraUrl: 'wss://live.example.com/signaling',
    rtmpUrl: 'rtmp://live.example.com:1935/live',
    rtmpsUrl,
    streamKey: STREAM_KEY,
    srtUrl: SRT_URL,
  },
});

describe('where encoders publish to a channel', () => {
  it('shows the RTMP server and hides the stream key and the SRT URL until asked', () => {
    renderPage(<ChannelLive channel={channel(null)} />, member(Permission.channel));
    expect(screen.getByTestId('channel-rtmp-url').textContent).toBe('rtmp://live.example.com:1935/live');
    expect(screen.queryByTestId('channel-rtmps-url')).toBeNull();
    expect(document.body.textContent).not.toContain(STREAM_KEY);
    expect(document.body.textContent).not.toContain('passphrase=');

    fireEvent.click(screen.getByTestId('channel-stream-key-toggle'));
    expect(screen.getByTestId('channel-stream-key').textContent).toBe(STREAM_KEY);
    expect(screen.getByTestId('channel-stream-key-toggle').getAttribute('aria-pressed')).toBe('true');
    // Each secret has its own toggle.
    expect(screen.getByTestId('channel-srt-url').textContent).not.toBe(SRT_URL);
    fireEvent.click(screen.getByTestId('channel-srt-url-toggle'));
    expect(screen.getByTestId('channel-srt-url').textContent).toBe(SRT_URL);

    fireEvent.click(screen.getByTestId('channel-stream-key-toggle'));
    expect(document.body.textContent).not.toContain(STREAM_KEY);
  });

  it('copies the stream key while it stays hidden', async () => {
    const writeText = vi.fn(async () => undefined);
    vi.stubGlobal('isSecureContext', true);
    vi.stubGlobal('navigator', { ...navigator, clipboard: { writeText } });
    renderPage(<ChannelLive channel={channel(null)} />, member(Permission.channel));
    fireEvent.click(screen.getByTestId('channel-stream-key-copy'));
    await waitFor(() => expect(writeText).toHaveBeenCalledWith(STREAM_KEY));
    expect(screen.getByTestId('channel-stream-key').getAttribute('data-shown')).toBe('false');
  });

  it('shows the RTMPS server when the live server has one', () => {
    renderPage(
      <ChannelLive channel={channel('rtmps://live.example.com:1936/live')} />,
      member(Permission.channel),
    );
    expect(screen.getByTestId('channel-rtmps-url').textContent).toBe('rtmps://live.example.com:1936/live');
    expect(screen.getByTestId('channel-obs-hint').querySelector('a')?.getAttribute('href')).toBe(
      '/docs/live/rtmp',
    );
  });
});
