import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { get as httpGet } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as HLS from 'hls-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant, type TestServer, testServer } from '@ukiyo/server/testing';
import { RawConnection } from '../src/testing/raw-http.ts';
import {
  apiToken,
  metricTotal,
  run,
  startLive,
  waitFor,
  type LiveUnderTest,
  VIEWER_PROCESS,
} from './helpers.ts';

const T = {
  createHls: 'ImageFlux_20200316.CreateMultistreamChannelWithHLS',
  playlists: 'ImageFlux_20200207.ListPlaylistURLs',
};

const RENDITION = { durationSeconds: 1, video: { width: 640, height: 360, fps: 30, bps: 800_000 } };
/** Waiting requests one client may hold in one process (src/hls/answers.ts). */
const WAITING_PER_CLIENT = 8;

describe('Low-Latency HLS', () => {
  let server: TestServer;
  let live: LiveUnderTest;
  let publisher: ChildProcess | undefined;
  let media: string;
  const scratch = mkdtempSync(join(tmpdir(), 'ukiyo-llhls-'));

  const get = async (url: string, userAgent = 'llhls-test') => {
    const answer = await fetch(url, { headers: { 'User-Agent': userAgent } });
    return { status: answer.status, bytes: Buffer.from(await answer.arrayBuffer()), at: performance.now() };
  };
  /**
   * A request on a connection of its own, as a player's are its own: fetch's pool would carry it
   * on one another client opened, which the live process handed to that client's viewer process.
   */
  const statusAlone = (url: string, userAgent: string) =>
    new Promise<number>((resolve, reject) =>
      httpGet(url, { agent: false, headers: { 'User-Agent': userAgent } }, (answer) => {
        answer.resume();
        answer.on('end', () => resolve(answer.statusCode!));
      }).on('error', reject),
    );
  const playlistAt = async (query = '') => {
    const answer = await get(`${media}${query}`);
    expect(answer.status).toBe(200);
    return HLS.parse(answer.bytes.toString('utf8')) as HLS.types.MediaPlaylist;
  };
  /** The newest listed part's segment and index in it, and the hinted part's URI. */
  const edge = (playlist: HLS.types.MediaPlaylist) => {
    const open = playlist.segments.at(-1)!;
    const listed = open.parts.filter((part) => !part.hint);
    return {
      msn: open.mediaSequenceNumber,
      parts: listed.length,
      hint: open.parts.find((part) => part.hint)?.uri,
      lastPart: (listed.at(-1) ?? playlist.segments.at(-2)!.parts.at(-1)!).uri,
    };
  };
  const partNumber = (uri: string) => Number(/^part(\d+)\.m4s$/.exec(uri)![1]);
  const decodeErrors = async (name: string, bytes: Buffer) => {
    const file = join(scratch, name);
    writeFileSync(file, bytes);
    return (await run('ffmpeg', ['-v', 'error', '-i', file, '-f', 'null', '-'])).stderr;
  };

  beforeAll(async () => {
    server = await testServer();
    live = await startLive(server, {}, VIEWER_PROCESS);
    const organizationId = (await createTenant(server.deps, { isLive: true })).organizationIds[0]!;
    const token = await apiToken(server, organizationId);
    const created = await live.call(T.createHls, { hls: [RENDITION] }, token);
    expect(created.status).toBe(200);
    const channelId = created.body.channel_id as string;
    publisher = spawn(
      'ffmpeg',
      [
        ...['-hide_banner', '-loglevel', 'error', '-re'],
        ...['-f', 'lavfi', '-i', 'testsrc=size=640x360:rate=30', '-f', 'lavfi', '-i', 'sine', '-t', '60'],
        ...['-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-g', '30', '-c:a', 'aac'],
        ...['-f', 'flv', `${live.rtmpUrl}/${created.body.stream_key as string}`],
      ],
      { stdio: 'ignore' },
    );
    const masterUrl = await waitFor(
      async () =>
        (
          (await live.call(T.playlists, { channel_id: channelId }, token)).body.hls as {
            playlist_url: string;
          }[]
        )[0]?.playlist_url,
      20_000,
      'the playlist URL',
    );
    media = `${live.baseUrl}${new URL(masterUrl).pathname.replace(/master\.m3u8$/, '0/index.m3u8')}`;
    // Three whole segments: enough for every check below.
    await waitFor(
      async () => ((await playlistAt()).segments.length > 3 ? true : undefined),
      10_000,
      'three whole segments',
    );
  });

  afterAll(async () => {
    publisher?.kill('SIGKILL');
    await live?.live.close();
  });

  it('lists parts of at most PART-TARGET, segments made of their parts, and a preload hint for the next part', async () => {
    const playlist = await playlistAt();
    expect(playlist.lowLatencyCompatibility).toMatchObject({ canBlockReload: true });
    const partTarget = playlist.partTargetDuration!;
    expect(partTarget).toBeGreaterThan(0);
    expect(playlist.lowLatencyCompatibility!.partHoldBack).toBeGreaterThanOrEqual(2 * partTarget);
    expect(playlist.segments[0]!.map?.uri).toBe('init.mp4');
    const init = (await get(new URL('init.mp4', media).href)).bytes;
    expect(init.toString('latin1', 4, 8)).toBe('ftyp');

    const complete = playlist.segments.filter((segment) => segment.parts.length > 0 && segment.uri);
    expect(complete.length).toBeGreaterThanOrEqual(2);
    for (const segment of playlist.segments) {
      for (const part of segment.parts.filter((listed) => !listed.hint))
        expect(part.duration).toBeLessThanOrEqual(partTarget);
    }
    for (const segment of complete.slice(-2)) {
      expect(segment.parts[0]!.independent).toBe(true);
      const parts = await Promise.all(
        segment.parts.map(async (part) => (await get(new URL(part.uri, media).href)).bytes),
      );
      const whole = await get(new URL(segment.uri, media).href);
      expect(whole.status).toBe(200);
      expect(whole.bytes.equals(Buffer.concat(parts))).toBe(true);
      const summed = segment.parts.reduce((sum, part) => sum + part.duration!, 0);
      expect(Math.abs(segment.duration - summed)).toBeLessThan(0.01);
      // Whole segment, and its first part alone, decode after the init segment.
      expect(
        await decodeErrors(`seg${segment.mediaSequenceNumber}.mp4`, Buffer.concat([init, whole.bytes])),
      ).toBe('');
      expect(await decodeErrors(`part-${segment.parts[0]!.uri}.mp4`, Buffer.concat([init, parts[0]!]))).toBe(
        '',
      );
      const probed = await run('ffprobe', [
        '-v',
        'error',
        '-show_entries',
        'stream=codec_name,width',
        '-of',
        'csv=p=0',
        join(scratch, `seg${segment.mediaSequenceNumber}.mp4`),
      ]);
      expect(probed.stdout.trim().split('\n').sort()).toEqual(['aac', 'h264,640']);
    }
    const { hint, lastPart } = edge(playlist);
    expect(partNumber(hint!)).toBe(partNumber(lastPart) + 1);
  });

  it('keeps audio and video gapless across parts and segments (a player buffers one range)', async () => {
    const playlist = await playlistAt();
    const init = (await get(new URL('init.mp4', media).href)).bytes;
    const complete = playlist.segments.filter((segment) => segment.parts.length > 0 && segment.uri);
    const segments = await Promise.all(
      complete.map(async (segment) => (await get(new URL(segment.uri, media).href)).bytes),
    );
    const file = join(scratch, 'gapless.mp4');
    writeFileSync(file, Buffer.concat([init, ...segments]));
    for (const stream of ['a:0', 'v:0']) {
      const probed = await run('ffprobe', [
        ...['-v', 'error', '-select_streams', stream],
        ...['-show_entries', 'packet=pts,duration', '-of', 'csv=p=0', file],
      ]);
      const packets = probed.stdout
        .trim()
        .split('\n')
        .map((line) => line.split(',').map(Number) as [number, number]);
      expect(packets.length).toBeGreaterThan(20);
      const ordered = packets.toSorted(([a], [b]) => a - b);
      for (const [i, [pts, duration]] of ordered.slice(0, -1).entries())
        expect(ordered[i + 1]![0], `${stream} packet ${i} at ${pts}`).toBe(pts + duration);
    }
  });

  it('answers a blocking reload for the next part as soon as that part is produced', async () => {
    const playlist = await playlistAt();
    const partTarget = playlist.partTargetDuration!;
    const next = edge(playlist);
    const startedAt = performance.now();
    // The hinted part, asked for before it exists, is sent when it is produced: the same moment.
    const [reload, hinted] = await Promise.all([
      get(`${media}?_HLS_msn=${next.msn}&_HLS_part=${next.parts}`),
      get(new URL(next.hint!, media).href),
    ]);
    expect(reload.status).toBe(200);
    expect(hinted.status).toBe(200);
    const reloaded = HLS.parse(reload.bytes.toString('utf8')) as HLS.types.MediaPlaylist;
    const listedUris = reloaded.segments.flatMap((segment) =>
      segment.parts.filter((part) => !part.hint).map((part) => part.uri),
    );
    expect(listedUris).toContain(next.hint);
    const waitedMs = reload.at - startedAt;
    console.log(
      `LL-HLS: blocking reload answered after ${Math.round(waitedMs)} ms (part target ${partTarget * 1000} ms), ` +
        `${Math.round(Math.abs(reload.at - hinted.at))} ms from the hinted part`,
    );
    // The next part is at most one part away; the answer follows its production at once.
    expect(waitedMs).toBeLessThan(partTarget * 1000 + 300);
    expect(Math.abs(reload.at - hinted.at)).toBeLessThan(100);
  });

  it('refuses malformed or too-far directives, and caps the requests a client keeps waiting', async () => {
    const { msn } = edge(await playlistAt());
    expect((await get(`${media}?_HLS_msn=${msn + 3}`)).status).toBe(400);
    expect((await get(`${media}?_HLS_part=1`)).status).toBe(400);
    expect((await get(`${media}?_HLS_msn=x`)).status).toBe(400);
    // A plain reload and an already-reached one answer at once.
    expect((await get(media)).status).toBe(200);
    expect((await get(`${media}?_HLS_msn=${msn - 1}`)).status).toBe(200);

    // The whole next segment: more than one segment away, within the three target durations a
    // blocking reload may wait (msn + 2 can need all three, too close to the limit on a busy host).
    const next = `${media}?_HLS_msn=${msn + 1}`;
    const waiting = Array.from({ length: WAITING_PER_CLIENT }, () => statusAlone(next, 'greedy'));
    // Once the server holds them all (a fixed pause raced their arrival on a loaded CI host).
    const held = async () => metricTotal(live, 'ukiyo_live_hls_requests_held');
    await waitFor(
      async () => ((await held()) === WAITING_PER_CLIENT ? true : undefined),
      5_000,
      'the greedy client’s requests to be held',
    );
    expect(await statusAlone(next, 'greedy')).toBe(429);
    // Another client is not held back by that one.
    const answers = await Promise.all([...waiting, statusAlone(next, 'patient')]);
    expect(answers).toEqual(Array(WAITING_PER_CLIENT + 1).fill(200));
  });

  it('answers LL-HLS connections in the viewer processes, and gives one back once it asks for anything else', async () => {
    const metric = (name: string) => metricTotal(live, name);
    const mediaPath = new URL(media).pathname;
    const master = mediaPath.replace(/0\/index\.m3u8$/, 'master.m3u8');
    const handedBefore = await metric('ukiyo_live_hls_connections_handed_off_total');
    const bytesBefore = await metric('ukiyo_live_hls_bytes_total');

    // A viewer's connection: its first request is an LL-HLS file, so a viewer process takes it.
    const viewer = await RawConnection.open(live.baseUrl);
    const listed = await viewer.get(mediaPath);
    expect(listed.status).toBe(200);
    expect(await metric('ukiyo_live_hls_connections_handed_off_total')).toBe(handedBefore + 1);
    const part = new URL(edge(HLS.parse(listed.body.toString()) as HLS.types.MediaPlaylist).lastPart, media)
      .pathname;
    const fromProcess = await viewer.get(part);
    // The same part from the live process itself: a connection whose first request is not LL-HLS.
    const other = await RawConnection.open(live.baseUrl);
    const masterFromLive = await other.get(master);
    expect(masterFromLive.status).toBe(200);
    const fromLive = await other.get(part);
    expect(await metric('ukiyo_live_hls_connections_handed_off_total')).toBe(handedBefore + 1);
    expect(fromProcess.status).toBe(200);
    expect(fromProcess.body.equals(fromLive.body)).toBe(true);
    for (const name of ['content-type', 'cache-control', 'access-control-allow-origin', 'content-length'])
      expect(fromProcess.headers[name], name).toBe(fromLive.headers[name]);

    // Anything else goes back to the live process on the same connection, pipelined or not: the
    // master playlist, a request with a body, and LL-HLS after them.
    const [playlistAgain, masterPlaylist] = await viewer.pipeline([mediaPath, master]);
    expect(playlistAgain!.status).toBe(200);
    expect(masterPlaylist!.status).toBe(200);
    expect(masterPlaylist!.body.toString()).toContain('0/index.m3u8');
    // WHEP's answer to an offer that is not SDP.
    expect((await viewer.request('POST /whep/0 HTTP/1.1', 'v=0\r\n')).status).toBe(415);
    const partAgain = await viewer.get(part);
    expect(partAgain.body.equals(fromLive.body)).toBe(true);
    viewer.close();
    other.close();

    // A scrape asks the viewer processes for their reports first: it counts every answer written
    // before it, theirs and the live process's.
    const answered = [
      listed,
      fromProcess,
      masterFromLive,
      fromLive,
      playlistAgain!,
      masterPlaylist!,
      partAgain,
    ];
    expect(await metric('ukiyo_live_hls_bytes_total')).toBe(
      bytesBefore + answered.reduce((sum, { body }) => sum + body.length, 0),
    );
  });

  // Last: the live server stops listening.
  it('drains the connections handed to the viewer processes: idle ones at once, one waiting once answered', async () => {
    const mediaPath = new URL(media).pathname;
    const waiting = await RawConnection.open(live.baseUrl);
    const idle = await RawConnection.open(live.baseUrl);
    const listed = await waiting.get(mediaPath);
    expect((await idle.get(mediaPath)).status).toBe(200);
    const { msn } = edge(HLS.parse(listed.body.toString()) as HLS.types.MediaPlaylist);
    // The next segment's first part: usually held when the drain begins, else answered before.
    let answeredAt = Infinity;
    const next = waiting.get(`${mediaPath}?_HLS_msn=${msn + 1}&_HLS_part=0`).then((answer) => {
      answeredAt = performance.now();
      return answer;
    });
    await new Promise((resolve) => setTimeout(resolve, 20));

    const began = performance.now();
    const drained = live.live.drain(10_000).then(() => performance.now());
    await idle.ended;
    expect((await next).status).toBe(200);
    await waiting.ended;
    const drainedAt = await drained;
    expect(drainedAt).toBeGreaterThanOrEqual(answeredAt);
    // Well within the grace: nothing waited for its cut.
    expect(drainedAt - began).toBeLessThan(5_000);
  });
});
