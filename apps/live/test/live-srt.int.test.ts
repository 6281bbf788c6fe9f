import { spawn, type ChildProcess } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTenant, type TestServer, testServer } from '@ukiyo/server/testing';
import {
  CONCLUSION,
  encodeHandshake,
  parseHandshake,
  peerIpField,
  type Handshake,
} from '../src/ingest/srt-packets.ts';
import { apiToken, firstSegmentOf, probe, startLive, waitFor, type LiveUnderTest } from './helpers.ts';
import { onAirLog } from './on-air-log.ts';

const T = {
  createHls: 'ImageFlux_20200316.CreateMultistreamChannelWithHLS',
  playlists: 'ImageFlux_20200207.ListPlaylistURLs',
  remove: 'ImageFlux_20180501.DeleteChannel',
};

/** Issue 15: an SRT publisher's first segment is listed this soon after its first media. */
const ON_AIR_BOUND_MS = 2000;

interface Caller {
  process: ChildProcess;
  /** Resolves when ffmpeg exits: its code, when, and what it said. */
  exited: Promise<{ code: number | null; at: number; stderr: string }>;
}

describe('SRT ingest', () => {
  let server: TestServer;
  let live: LiveUnderTest;
  let token: string;
  const callers: Caller[] = [];
  const scratch = mkdtempSync(join(tmpdir(), 'ukiyo-live-srt-'));
  const { log, firstKeyframes } = onAirLog(50);

  /** A channel of 1 s segments and its stream secret, read from the SRT URL the API answers. */
  const createChannel = async (
    hls: unknown[] = [{ durationSeconds: 1, video: { width: 320, height: 180, fps: 15, bps: 300_000 } }],
  ) => {
    const created = await live.call(T.createHls, { hls }, token);
    expect(created.status).toBe(200);
    const srtUrl = new URL(created.body.srt_url as string);
    const channelId = created.body.channel_id as string;
    expect(srtUrl.searchParams.get('streamid')).toBe(channelId);
    return { channelId, passphrase: srtUrl.searchParams.get('passphrase')! };
  };

  /** An ffmpeg SRT caller publishing a test pattern (and a tone) to the live process's SRT port. */
  const call = (streamId: string, passphrase: string, { audio = true } = {}): Caller => {
    // ffmpeg takes the stream id as written (no percent-decoding), as OBS does.
    const url = `srt://127.0.0.1:${live.srtPort}?streamid=${streamId}&passphrase=${passphrase}`;
    const child = spawn(
      'ffmpeg',
      [
        ...['-hide_banner', '-nostats', '-loglevel', 'warning', '-re'],
        ...['-f', 'lavfi', '-i', 'testsrc=size=640x360:rate=30'],
        ...(audio ? ['-f', 'lavfi', '-i', 'sine'] : []),
        ...['-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-g', '30'],
        ...(audio ? ['-c:a', 'aac'] : []),
        ...['-f', 'mpegts', url],
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => (stderr += chunk));
    const caller: Caller = {
      process: child,
      exited: new Promise((resolve) => child.on('exit', (code) => resolve({ code, at: Date.now(), stderr }))),
    };
    callers.push(caller);
    return caller;
  };

  /** The master playlist's URL once ListPlaylistURLs lists it (polled every 50 ms), and when. */
  const listed = async (channelId: string) => {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const answer = await live.call(T.playlists, { channel_id: channelId }, token);
      const url = (answer.body.hls as { playlist_url: string }[])[0]?.playlist_url;
      if (url) return { masterUrl: `${live.baseUrl}${new URL(url).pathname}`, listedAt: Date.now() };
      if (Date.now() > deadline) throw new Error('timed out waiting for the playlist URL');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  /** Each rendition's first segment, fetched as a viewer would and probed. */
  const probeRenditions = async (masterUrl: string, renditions: number) => {
    const probed = [];
    for (let index = 0; index < renditions; index++) {
      const media = masterUrl.replace(/master\.m3u8$/, `${index}/index.m3u8`);
      const file = join(scratch, `${index}-${Date.now()}.mp4`);
      writeFileSync(file, (await firstSegmentOf(media)).bytes);
      probed.push((await probe(file)).streams.map((stream) => `${stream.codec_type}:${stream.codec_name}`));
    }
    return probed;
  };

  const claimOf = (channelId: string) =>
    server.deps.db
      .selectFrom('channels')
      .select(['active_connections', 'connection_id'])
      .where('id', '=', channelId)
      .executeTakeFirstOrThrow();

  const onAirAfter = (channelId: string, listedAt: number) => {
    const keyframeAt = firstKeyframes.get(channelId);
    expect(keyframeAt, 'the session logged its first media').toBeDefined();
    const ms = listedAt - keyframeAt!;
    console.log(`SRT: first segment listed ${ms} ms after the first media reached ffmpeg`);
    return ms;
  };

  beforeAll(async () => {
    server = await testServer();
    live = await startLive({ ...server, deps: { ...server.deps, log } });
    token = await apiToken(server, (await createTenant(server.deps, { isLive: true })).organizationIds[0]!);
  });

  // A caller stopped by a signal closes its SRT connection (SHUTDOWN): its session ends.
  afterEach(async () => {
    const running = callers.splice(0).filter((caller) => caller.process.exitCode === null);
    for (const caller of running) caller.process.kill('SIGTERM');
    await Promise.all(running.map((caller) => caller.exited));
  });

  afterAll(async () => {
    await live?.live.close();
  });

  it('publishes H.264 + AAC over SRT into every rendition, on air within 2 s of its first media', async () => {
    const { channelId, passphrase } = await createChannel([
      { durationSeconds: 1, video: { width: 320, height: 180, fps: 30, bps: 400_000 } },
      {
        durationSeconds: 1,
        video: { width: 160, height: 90, fps: 15, bps: 120_000 },
        audio: { bps: 32_000 },
      },
    ]);
    call(channelId, passphrase);
    const { masterUrl, listedAt } = await listed(channelId);
    expect(onAirAfter(channelId, listedAt)).toBeLessThan(ON_AIR_BOUND_MS);

    const master = await (await fetch(masterUrl)).text();
    expect(master.match(/CODECS="avc1\.[0-9a-f]{6},mp4a\.40\.2"/g)).toHaveLength(2);
    expect(await probeRenditions(masterUrl, 2)).toEqual([
      ['video:h264', 'audio:aac'],
      ['video:h264', 'audio:aac'],
    ]);
    expect(await claimOf(channelId)).toMatchObject({ active_connections: 1 });
  });

  it('publishes a video-only stream: the master playlist names no audio codec', async () => {
    const { channelId, passphrase } = await createChannel();
    const caller = call(channelId, passphrase, { audio: false });
    const { masterUrl, listedAt } = await listed(channelId);
    onAirAfter(channelId, listedAt);
    const master = await (await fetch(masterUrl)).text();
    expect(master).toMatch(/CODECS="avc1\.[0-9a-f]{6}"/);
    expect(master).not.toContain('mp4a');
    expect(await probeRenditions(masterUrl, 1)).toEqual([['video:h264']]);

    // An encoder that stops closes its connection (SHUTDOWN): the session ends, the channel is free.
    caller.process.kill('SIGTERM');
    const stoppedAt = (await caller.exited).at;
    await waitFor(
      async () => ((await claimOf(channelId)).active_connections === 0 ? true : undefined),
      2000,
      'the claim released',
    );
    console.log(`SRT: claim released ${Date.now() - stoppedAt} ms after the caller stopped`);
    const media = await (await fetch(masterUrl.replace(/master\.m3u8$/, '0/index.m3u8'))).text();
    expect(media).toContain('#EXT-X-ENDLIST');
  });

  it('refuses a wrong passphrase at the handshake and leaves the channel free', async () => {
    const { channelId, passphrase } = await createChannel();
    const startedAt = Date.now();
    const refused = await call(channelId, `${passphrase.slice(0, -1)}${passphrase.endsWith('A') ? 'B' : 'A'}`)
      .exited;
    expect(refused.code).not.toBe(0);
    // libsrt names the reason it was refused for (SRT_REJ_BADSECRET).
    expect(refused.stderr).toContain('Incorrect passphrase');
    expect(refused.at - startedAt).toBeLessThan(3000);
    expect(await claimOf(channelId)).toEqual({ active_connections: 0, connection_id: null });
  });

  it('asks the auth webhook (protocol srt), waiting out the retransmitted conclusions', async () => {
    // Answers after 1.2 s, while the caller repeats its conclusion every 250 ms.
    const calls: { path: string; body: Record<string, unknown> }[] = [];
    const hooks: Server = createServer((req, res) => {
      let text = '';
      req.on('data', (chunk: Buffer) => (text += chunk.toString()));
      req.on('end', () => {
        calls.push({ path: req.url ?? '', body: JSON.parse(text) as Record<string, unknown> });
        setTimeout(() => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ allowed: req.url === '/allow' }));
        }, 1200);
      });
    });
    await new Promise<void>((resolve) => hooks.listen(0, '127.0.0.1', resolve));
    const hooksUrl = `http://127.0.0.1:${(hooks.address() as AddressInfo).port}`;
    try {
      const hls = [{ durationSeconds: 1, video: { width: 320, height: 180, fps: 15, bps: 300_000 } }];
      const denied = await live.call(T.createHls, { hls, auth_webhook_url: `${hooksUrl}/deny` }, token);
      const deniedSecret = new URL(denied.body.srt_url as string).searchParams.get('passphrase')!;
      const refused = await call(denied.body.channel_id as string, deniedSecret).exited;
      expect(refused.code).not.toBe(0);
      expect(await claimOf(denied.body.channel_id as string)).toEqual({
        active_connections: 0,
        connection_id: null,
      });

      const allowed = await live.call(T.createHls, { hls, auth_webhook_url: `${hooksUrl}/allow` }, token);
      const channelId = allowed.body.channel_id as string;
      call(channelId, new URL(allowed.body.srt_url as string).searchParams.get('passphrase')!);
      const { masterUrl } = await listed(channelId);
      expect(await probeRenditions(masterUrl, 1)).toEqual([['video:h264', 'audio:aac']]);
      expect(calls.map((hook) => [hook.path, hook.body.protocol, hook.body.role])).toEqual([
        ['/deny', 'srt', 'sendonly'],
        ['/allow', 'srt', 'sendonly'],
      ]);
    } finally {
      await new Promise((resolve) => hooks.close(resolve));
    }
  });

  it('answers inductions without state and drops whatever else comes from unknown addresses', async () => {
    const socket = createSocket('udp4');
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    /** The front's answer to one datagram, or undefined when none comes within 300 ms. */
    const exchange = (packet: Buffer) =>
      new Promise<Handshake | undefined>((resolve) => {
        const timer = setTimeout(() => {
          socket.off('message', answered);
          resolve(undefined);
        }, 300);
        const answered = (answer: Buffer) => {
          clearTimeout(timer);
          socket.off('message', answered);
          resolve(parseHandshake(answer));
        };
        socket.on('message', answered);
        socket.send(packet, live.srtPort, '127.0.0.1');
      });
    const request: Handshake = {
      timestamp: 0,
      destination: 0,
      version: 4,
      encryption: 0,
      extension: 2,
      isn: 1,
      mss: 1500,
      flowWindow: 8192,
      type: 1,
      socketId: 77,
      cookie: 0,
      peerIp: peerIpField('127.0.0.1'),
      extensions: Buffer.alloc(0),
    };
    try {
      const data = Buffer.alloc(16 + 1316);
      data.writeUInt32BE(1, 0);
      expect(await exchange(data)).toBeUndefined();

      const induction = (await exchange(encodeHandshake(request)))!;
      expect(induction).toMatchObject({ version: 5, extension: 0x4a17, type: 1, destination: 77 });
      const conclusion = { ...request, version: 5, extension: 1, type: CONCLUSION };
      // A cookie the front did not give proves nothing: no answer, nothing spent.
      expect(
        await exchange(encodeHandshake({ ...conclusion, cookie: induction.cookie ^ 1 })),
      ).toBeUndefined();
      // With the cookie: no stream id is a bad request (1400), an HSv4 caller too old (8).
      expect(await exchange(encodeHandshake({ ...conclusion, cookie: induction.cookie }))).toMatchObject({
        type: 1000 + 1400,
      });
      expect(
        await exchange(
          encodeHandshake({ ...conclusion, version: 4, socketId: 78, cookie: induction.cookie }),
        ),
      ).toMatchObject({ type: 1000 + 8, destination: 78 });
    } finally {
      socket.close();
    }
  });

  it('refuses unknown, malformed and non-publishing stream ids', async () => {
    const { channelId, passphrase } = await createChannel();
    for (const streamId of ['0123456789abcdef0123', 'not a channel', `#!::r=${channelId},m=request`]) {
      const startedAt = Date.now();
      const refused = await call(streamId, passphrase).exited;
      expect(refused.code, streamId).not.toBe(0);
      expect(refused.at - startedAt, streamId).toBeLessThan(3000);
    }
    expect(await claimOf(channelId)).toEqual({ active_connections: 0, connection_id: null });
  });

  it('publishes two channels over the one port at once; DeleteChannel disconnects a caller within 1 s', async () => {
    const first = await createChannel();
    const second = await createChannel();
    const firstCaller = call(first.channelId, first.passphrase);
    // The access-control form of the stream id names the channel too.
    const secondCaller = call(`#!::r=${second.channelId},m=publish`, second.passphrase);
    const [one, two] = await Promise.all([listed(first.channelId), listed(second.channelId)]);
    expect(await probeRenditions(one.masterUrl, 1)).toEqual([['video:h264', 'audio:aac']]);
    expect(await probeRenditions(two.masterUrl, 1)).toEqual([['video:h264', 'audio:aac']]);
    // One publisher per channel: another caller is refused (SRT_REJX_CONFLICT), the first goes on.
    const intruder = await call(first.channelId, first.passphrase).exited;
    expect(intruder.code).not.toBe(0);
    expect(firstCaller.process.exitCode).toBeNull();

    const deletedAt = Date.now();
    expect((await live.call(T.remove, { channel_id: first.channelId }, token)).status).toBe(200);
    const { at } = await firstCaller.exited;
    console.log(`SRT: caller exited ${at - deletedAt} ms after DeleteChannel was called`);
    expect(at - deletedAt).toBeLessThan(1000);
    // The other channel goes on.
    await waitFor(
      async () =>
        secondCaller.process.exitCode === null && (await listed(second.channelId)) ? true : undefined,
      1000,
      'the second channel still published',
    );
    expect(await claimOf(second.channelId)).toMatchObject({ active_connections: 1 });
  });
});
