import { randomBytes } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import * as HLS from 'hls-parser';
import { afterEach, describe, expect, it } from 'vitest';
import { mintPlaybackToken } from '../playback-token-format.ts';
import { fragment, init } from '../testing/fmp4.ts';
import { RawConnection } from '../testing/raw-http.ts';
import { TEST_VIEWER_SETTINGS } from '../testing/viewer-settings.ts';
import {
  HlsServing,
  renditionRequestOf,
  type FromHlsServing,
  type MirroredRendition,
} from './hls-serving.ts';

const RENDITION: MirroredRendition = {
  key: 'c1/d1/0',
  channelId: 'c1',
  connectionId: 'd1',
  organizationId: 7,
  targetDuration: 1,
  options: { targetDuration: 1, partTarget: 0.2, windowSegments: 6, windowBytes: 1 << 20 },
};
const MEDIA = '/hls/c1/d1/0/index.m3u8';
/** 30 fps at 15360 Hz: a part is six frames, a segment 30. */
const FRAME = 512;

const closing: (() => void)[] = [];
afterEach(() => closing.splice(0).forEach((close) => close()));

/**
 * A viewer process's HLS serving behind a listening socket that hands it every connection with
 * its first bytes, as the live process does; what it gives back and reports is kept.
 */
async function serving(rendition = RENDITION) {
  const reports: FromHlsServing[] = [];
  const givenBack: { head: string; socket: Socket }[] = [];
  const hls = new HlsServing(
    { ...TEST_VIEWER_SETTINGS.hls, trustProxy: true },
    (message) => reports.push(message),
    (head, socket) => givenBack.push({ head: Buffer.from(head).toString('latin1'), socket }),
  );
  const server: Server = createServer((socket) =>
    socket.once('data', (head: Buffer) => {
      socket.pause();
      hls.receive({ type: 'hls-connection', head }, socket);
    }),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closing.push(() => server.close());
  const baseUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  hls.receive({ type: 'hls-open', rendition }, undefined);
  let frame = 0;
  const parts = (count: number) => {
    for (const end = frame + count * 6; frame < end; frame++)
      hls.receive(
        {
          type: 'hls-bytes',
          key: RENDITION.key,
          bytes: fragment({ startTime: frame * FRAME, durations: [FRAME], sync: frame % 30 === 0 }),
        },
        undefined,
      );
  };
  hls.receive({ type: 'hls-bytes', key: RENDITION.key, bytes: init() }, undefined);
  parts(7);
  const connect = async (userAgent?: string, headers?: string) => {
    const connection = await RawConnection.open(baseUrl, userAgent, headers);
    closing.push(() => connection.close());
    return connection;
  };
  return { hls, reports, givenBack, parts, connect };
}

describe('LL-HLS in a viewer process', () => {
  it('answers a rendition’s files from the mirrored bytes, blocking reloads included', async () => {
    const { parts, connect } = await serving();
    const viewer = await connect();
    const listed = await viewer.get(MEDIA);
    expect(listed.status).toBe(200);
    expect(listed.headers['content-type']).toBe('application/vnd.apple.mpegurl');
    const playlist = HLS.parse(listed.body.toString()) as HLS.types.MediaPlaylist;
    const open = playlist.segments.at(-1)!;
    const part = await viewer.get(`/hls/c1/d1/0/${open.parts[0]!.uri}`);
    expect(part.status).toBe(200);
    expect(part.headers['cache-control']).toBe('public, max-age=86400, immutable');
    // The next part, asked before it exists, comes once it is mirrored.
    const listedParts = open.parts.filter((listed) => !listed.hint).length;
    const next = viewer.get(`${MEDIA}?_HLS_msn=${open.mediaSequenceNumber}&_HLS_part=${listedParts}`);
    setTimeout(() => parts(1), 50);
    const reloaded = await next;
    expect(reloaded.status).toBe(200);
    expect(reloaded.body.length).toBeGreaterThan(listed.body.length);
    expect((await viewer.get(`${MEDIA}?_HLS_msn=x`)).status).toBe(400);
    expect((await viewer.get('/hls/c1/d1/0/part999.m4s')).status).toBe(404);
  });

  it('answers a channel needing playback tokens only with one, its playlists’ URIs carrying it', async () => {
    const key = randomBytes(32);
    const { connect } = await serving({ ...RENDITION, playbackKey: key.toString('hex') });
    const inAMinute = new Date(Date.now() + 60_000);
    const token = mintPlaybackToken(key, 'c1', inAMinute);
    const viewer = await connect();
    const refused = await viewer.get(MEDIA);
    expect(refused.status).toBe(401);
    expect(JSON.parse(refused.body.toString())).toEqual({
      ok: false,
      error: 'a valid playback token is required',
    });
    expect(refused.headers['access-control-allow-origin']).toBe('*');
    for (const wrong of [
      mintPlaybackToken(randomBytes(32), 'c1', inAMinute),
      mintPlaybackToken(key, 'c2', inAMinute),
      mintPlaybackToken(key, 'c1', new Date(Date.now() - 1_000)),
    ])
      expect((await viewer.get(`${MEDIA}?token=${wrong}`)).status).toBe(401);

    const listed = await viewer.get(`${MEDIA}?_HLS_msn=1&_HLS_part=0&token=${token}`);
    expect(listed.status).toBe(200);
    const playlist = HLS.parse(listed.body.toString()) as HLS.types.MediaPlaylist;
    const uris = [
      playlist.segments[0]!.map!.uri,
      playlist.segments[0]!.uri,
      ...playlist.segments.at(-1)!.parts.map((part) => part.uri),
    ];
    for (const uri of uris) expect(uri).toMatch(/\?token=/);
    expect(uris.every((uri) => uri.endsWith(`?token=${token}`))).toBe(true);
    const part = uris.at(-2)!;
    expect((await viewer.get(`/hls/c1/d1/0/${part}`)).status).toBe(200);
    expect((await viewer.get(`/hls/c1/d1/0/${part.split('?')[0]}`)).status).toBe(401);
  });

  it('drains: an idle connection closes at once, one waiting for a part once it is answered', async () => {
    const { hls, reports, parts, connect } = await serving();
    const idle = await connect();
    const waiting = await connect();
    expect((await idle.get(MEDIA)).status).toBe(200);
    const playlist = HLS.parse((await waiting.get(MEDIA)).body.toString()) as HLS.types.MediaPlaylist;
    const open = playlist.segments.at(-1)!;
    const listedParts = open.parts.filter((part) => !part.hint).length;
    const next = waiting.get(`${MEDIA}?_HLS_msn=${open.mediaSequenceNumber}&_HLS_part=${listedParts}`);
    await new Promise((resolve) => setTimeout(resolve, 50));

    hls.receive({ type: 'hls-drain', graceMs: 10_000 }, undefined);
    await idle.ended;
    const drained = () => reports.some((report) => report.type === 'hls-drained');
    expect(drained()).toBe(false);
    parts(1);
    const answered = await next;
    expect(answered.status).toBe(200);
    expect(answered.headers.connection).toBe('close');
    await waiting.ended;
    await expect.poll(drained).toBe(true);
  });

  it('gives the connection back, with the bytes it read, at the first request it does not answer', async () => {
    const { givenBack, connect } = await serving();
    const viewer = await connect();
    expect((await viewer.get(MEDIA)).status).toBe(200);
    // Pipelined: the playlist is answered here; a rendition not mirrored here and what follows
    // go back.
    const rest = 'GET /hls/c1/d1/1/index.m3u8 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nGET /x HTTP/1.1\r\n';
    const answered = viewer.pipeline([MEDIA]);
    await new Promise((resolve) => setTimeout(resolve, 20));
    viewer.send(rest);
    expect((await answered)[0]!.status).toBe(200);
    await expect.poll(() => givenBack.length).toBe(1);
    expect(givenBack[0]!.head).toBe(rest);
  });

  it.each([
    ['a peer’s request', `GET ${MEDIA} HTTP/1.1\r\nHost: a\r\nX-Ukiyo-Live-Peer: 1.sig\r\n`],
    ['a HEAD', `HEAD ${MEDIA} HTTP/1.1\r\nHost: a\r\n`],
    ['a body', `GET ${MEDIA} HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n`],
    ['an encrypted channel’s segment', 'GET /hls/c1/d1/0/seg3.ts HTTP/1.1\r\nHost: a\r\n'],
  ])('leaves %s to the live process', (_, head) => {
    expect(renditionRequestOf(head, '10.0.0.1', false)).toBeUndefined();
  });

  it('names the client by its address (the proxy’s word with TRUST_PROXY) and user agent', () => {
    const head = `GET ${MEDIA}?_HLS_msn=3 HTTP/1.1\r\nHost: a\r\nUser-Agent: hls.js\r\nX-Forwarded-For: 1.2.3.4, 5.6.7.8\r\n`;
    expect(renditionRequestOf(head, '10.0.0.1', true)).toEqual({
      key: 'c1/d1/0',
      name: 'index.m3u8',
      search: '_HLS_msn=3',
      client: '5.6.7.8 hls.js',
    });
    expect(renditionRequestOf(head, '10.0.0.1', false)?.client).toBe('10.0.0.1 hls.js');
  });

  it('reports what it answered, by channel and by status, when asked', async () => {
    const { hls, reports, connect } = await serving();
    const first = await connect('player-a');
    const second = await connect('player-b');
    const part =
      (await first.get(MEDIA)).status === 200 ? await second.get('/hls/c1/d1/0/part1.m4s') : undefined;
    await first.get('/hls/c1/d1/0/part999.m4s');
    hls.receive({ type: 'hls-report' }, undefined);
    const report = reports.at(-1)!;
    expect(report.type).toBe('hls-served');
    if (report.type !== 'hls-served') return;
    expect(report.report.channels).toEqual([
      {
        channelId: 'c1',
        organizationId: 7,
        requests: 2,
        bytes: expect.any(Number),
        clients: ['127.0.0.1 player-a', '127.0.0.1 player-b'],
        watching: ['127.0.0.1 player-a'],
      },
    ]);
    expect(report.report.channels[0]!.bytes).toBeGreaterThan(part!.body.length);
    expect(report.report.answers).toEqual(
      expect.arrayContaining([
        { kind: 'playlist', status: 200, count: 1 },
        { kind: 'segment', status: 200, count: 1 },
        { kind: 'segment', status: 404, count: 1 },
      ]),
    );
    expect(report.report.durations).toHaveLength(3);
    // Reported once: the next report starts again.
    hls.receive({ type: 'hls-report' }, undefined);
    const next = reports.at(-1)!;
    expect(next.type === 'hls-served' && next.report.channels).toEqual([]);
  });
});
