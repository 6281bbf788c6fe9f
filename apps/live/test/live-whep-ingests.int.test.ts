import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTenant, type TestServer, testServer } from '@ukiyo/server/testing';
import { apiToken, decodedVideo, startLive, waitFor, type LiveUnderTest } from './helpers.ts';
import { view, type WhepViewer } from './whep-viewer.ts';

const T = {
  createHls: 'ImageFlux_20200316.CreateMultistreamChannelWithHLS',
  playlists: 'ImageFlux_20200207.ListPlaylistURLs',
};

/**
 * Two rungs: WebRTC viewers get the baseline one (ladder.ts webRtcRendition), told apart from
 * the other by its picture size. One-second segments: a viewer waits at most 1 s for a keyframe.
 */
const LADDER = [
  {
    durationSeconds: 1,
    video: { width: 480, height: 270, fps: 15, bps: 500_000, codec: 'h264_high' },
    audio: { bps: 32_000 },
  },
  {
    durationSeconds: 1,
    video: { width: 320, height: 180, fps: 15, bps: 300_000, codec: 'h264_baseline' },
    audio: { bps: 32_000 },
  },
];

/** The publishers' test pattern and tone, as ffmpeg arguments (encoded by the caller). */
const SOURCE = ['-re', '-f', 'lavfi', '-i', 'testsrc=size=640x360:rate=30', '-t', '40'];
const TONE = ['-f', 'lavfi', '-i', 'sine'];
const X264 = ['-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-g', '30'];

describe('WebRTC viewers of RTMP and SRT publishers', () => {
  let server: TestServer;
  let live: LiveUnderTest;
  let token: string;
  const dir = mkdtempSync(join(tmpdir(), 'ukiyo-whep-ingests-'));
  const publishers: ChildProcess[] = [];
  const viewers: WhepViewer[] = [];

  const publisher = (args: string[]) => {
    const child = spawn('ffmpeg', ['-hide_banner', '-loglevel', 'error', ...args], { stdio: 'ignore' });
    publishers.push(child);
  };

  /** Waits for the channel's playlist (on air), then has a werift viewer join it. */
  const watchOnAir = async (channelId: string, name: string) => {
    await waitFor(
      async () => ((await live.call(T.playlists, { channel_id: channelId }, token)).body.hls as unknown[])[0],
      20_000,
      'the channel on air',
    );
    const viewer = await view(`${live.baseUrl}/whep/${channelId}`, join(dir, name));
    viewers.push(viewer);
    return viewer;
  };

  /**
   * Watches for 3 s after the first frame; answers the time from the WHEP answer to the first
   * frame (the join), and what the viewer's H.264 file decodes to.
   */
  const watched = async (viewer: WhepViewer, name: string) => {
    expect(viewer).toMatchObject({ status: 201, error: '' });
    const answeredAt = Date.now();
    await waitFor(async () => (viewer.frames() > 0 ? true : undefined), 10_000, 'a first frame');
    const joinMs = Date.now() - answeredAt;
    await waitFor(async () => (viewer.frames() >= 45 ? true : undefined), 10_000, '3 s of frames');
    const audioPackets = viewer.audioPackets();
    await viewer.stop();
    return { joinMs, audioPackets, ...(await decodedVideo(join(dir, name))) };
  };

  const createChannel = async () => {
    const { status, body } = await live.call(T.createHls, { hls: LADDER }, token);
    expect(status).toBe(200);
    return body as { channel_id: string; stream_key: string; srt_url: string };
  };

  beforeAll(async () => {
    server = await testServer();
    live = await startLive(server);
    const tenant = await createTenant(server.deps, { isLive: true });
    token = await apiToken(server, tenant.organizationIds[0]!);
  });

  afterEach(async () => {
    await Promise.all(viewers.splice(0).map((viewer) => viewer.stop(false)));
    for (const child of publishers.splice(0)) child.kill('SIGKILL');
  });

  afterAll(async () => {
    await live?.live.close();
  });

  it('forwards the ladder of an RTMP publisher to a WHEP viewer: decodable baseline video and Opus audio', async () => {
    const channel = await createChannel();
    publisher([
      ...SOURCE,
      ...TONE,
      ...X264,
      ...['-c:a', 'aac', '-f', 'flv', `${live.rtmpUrl}/${channel.stream_key}`],
    ]);
    const viewer = await watchOnAir(channel.channel_id, 'rtmp.h264');
    expect(viewer.answer).toMatch(/^a=rtpmap:\d+ opus\/48000\/2\r?$/im);
    const picture = await watched(viewer, 'rtmp.h264');
    console.log(`RTMP: a WHEP viewer's first frame ${picture.joinMs} ms after its answer`);
    // The baseline rung, not the larger high-profile one.
    expect(picture).toMatchObject({ width: 320, height: 180, profile: 'Constrained Baseline' });
    expect(picture.frames).toBeGreaterThanOrEqual(45);
    // The viewer starts at a keyframe with its parameter sets (in-band): nothing undecodable.
    expect(picture.errors).toBe('');
    // 20 ms Opus frames: 50 a second, for at least the 3 s watched.
    expect(picture.audioPackets).toBeGreaterThan(120);
    // No keyframe can be asked of ffmpeg: the next one, at most a segment (1 s) later, and ICE.
    expect(picture.joinMs).toBeLessThan(4_000);
  });

  it('forwards an SRT publisher to a WHEP viewer', async () => {
    const channel = await createChannel();
    const srt = new URL(channel.srt_url);
    const url = `srt://127.0.0.1:${live.srtPort}?streamid=${channel.channel_id}&passphrase=${srt.searchParams.get('passphrase')!}`;
    publisher([...SOURCE, ...TONE, ...X264, ...['-c:a', 'aac', '-f', 'mpegts', url]]);
    const viewer = await watchOnAir(channel.channel_id, 'srt.h264');
    const picture = await watched(viewer, 'srt.h264');
    console.log(`SRT: a WHEP viewer's first frame ${picture.joinMs} ms after its answer`);
    expect(picture).toMatchObject({ width: 320, height: 180, errors: '' });
    expect(picture.frames).toBeGreaterThanOrEqual(45);
    expect(picture.audioPackets).toBeGreaterThan(120);
  });

  it('offers no audio to the viewers of an RTMP publisher that sends none', async () => {
    const channel = await createChannel();
    publisher([...SOURCE, ...X264, ...['-f', 'flv', `${live.rtmpUrl}/${channel.stream_key}`]]);
    const viewer = await watchOnAir(channel.channel_id, 'silent.h264');
    expect(viewer).toMatchObject({ status: 201, error: '' });
    const audio = viewer.answer.slice(viewer.answer.indexOf('m=audio'));
    expect(audio).toMatch(/^a=inactive\r?$/m);
    const picture = await watched(viewer, 'silent.h264');
    expect(picture).toMatchObject({ width: 320, height: 180, errors: '', audioPackets: 0 });
  });
});
