import { createDecipheriv } from 'node:crypto';
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { Permission } from '@ukiyo/contract';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTenant, createTestUser, loggedIn, type TestServer, testServer } from '@ukiyo/server/testing';
import {
  apiToken,
  childFfmpegCount,
  probe,
  run,
  segmentNames,
  startLive,
  startS3,
  waitFor,
  type LiveUnderTest,
} from './helpers.ts';
import { publish, type Publisher } from './publisher.ts';
import { view } from './whep-viewer.ts';

const T = {
  createHls: 'ImageFlux_20200316.CreateMultistreamChannelWithHLS',
  playlists: 'ImageFlux_20200207.ListPlaylistURLs',
  remove: 'ImageFlux_20180501.DeleteChannel',
  createDestination: 'ImageFlux_20190205.CreateArchiveDestination',
  key: 'ImageFlux_20200707.GetEncryptKey',
};

interface Hook {
  path: string;
  body: Record<string, unknown>;
}

/** A customer's webhook endpoint: records every call; `/auth/allow` allows, `/auth/deny` refuses. */
async function startHooks(): Promise<{ server: Server; url: string; calls: Hook[] }> {
  const calls: Hook[] = [];
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (chunk: Buffer) => (text += chunk.toString()));
    req.on('end', () => {
      calls.push({ path: req.url ?? '', body: JSON.parse(text) as Record<string, unknown> });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ allowed: req.url === '/auth/allow' }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, calls };
}

/** Segment names and the media sequence of a media playlist. */
function mediaPlaylist(text: string): { sequence: number; segments: string[] } {
  return {
    sequence: Number(/#EXT-X-MEDIA-SEQUENCE:(\d+)/.exec(text)?.[1] ?? 0),
    segments: segmentNames(text),
  };
}

/** CRC-32/MPEG-2 (ISO 13818-1 annex A): 0 over a table section that ends with its own CRC. */
function mpegCrc32(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of bytes) {
    crc ^= byte << 24;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x80000000 ? (crc << 1) ^ 0x04c11db7 : crc << 1;
  }
  return crc >>> 0;
}

describe('live ingest and HLS', () => {
  let server: TestServer;
  let live: LiveUnderTest;
  let hooks: Awaited<ReturnType<typeof startHooks>>;
  let storage: Awaited<ReturnType<typeof startS3>> | undefined;
  let s3: S3Client;
  let endPoint: string;
  let token: string;
  let organizationId: number;
  let accountId: number;
  const scratch = mkdtempSync(join(tmpdir(), 'ukiyo-live-probe-'));
  const publishers: Publisher[] = [];

  const whip = (channelId: string) => `${live.baseUrl}/whip/${channelId}`;
  const start = async (options: Omit<Parameters<typeof publish>[0], 'token'> & { token?: string }) => {
    const publisher = await publish({ token, ...options });
    publishers.push(publisher);
    return publisher;
  };
  const playlistUrl = (channelId: string) =>
    waitFor(
      async () => {
        const answer = await live.call(T.playlists, { channel_id: channelId }, token);
        if (answer.status !== 200) throw new Error(`ListPlaylistURLs: ${JSON.stringify(answer)}`);
        const hls = answer.body.hls as { connection_id: string; playlist_url: string }[];
        return hls[0];
      },
      15_000,
      'the playlist URL',
    );
  const text = async (url: string) => (await fetch(url)).text();
  /** HLS requests metered for the channel so far. */
  const hlsRequestsOf = async (channelId: string) => {
    await live.live.flushUsage();
    const row = await server.deps.db
      .selectFrom('live_usage_hourly')
      .select((eb) => eb.fn.sum<number>('hls_requests').as('requests'))
      .where('channel_id', '=', channelId)
      .executeTakeFirst();
    return Number(row?.requests ?? 0);
  };
  const segmentsOf = async (url: string, count: number) =>
    waitFor(
      async () => {
        const playlist = mediaPlaylist(await text(url));
        return playlist.segments.length >= count ? playlist : undefined;
      },
      20_000,
      `${count} segments`,
    );

  beforeAll(async () => {
    server = await testServer();
    hooks = await startHooks();
    storage = await startS3();
    ({ endPoint, s3 } = storage);
    live = await startLive(server);
    const tenant = await createTenant(server.deps, { isLive: true });
    organizationId = tenant.organizationIds[0]!;
    accountId = tenant.accountId;
    token = await apiToken(server, organizationId);
  });

  // A test that failed half way leaves no publisher behind for the next ones to count (its
  // WHIP DELETE ends the session at once; one whose live process the test closed has none to
  // reach); a stopped one is stopped already.
  afterEach(async () => {
    await Promise.all(publishers.splice(0).map((publisher) => publisher.stop().catch(() => undefined)));
  });

  afterAll(async () => {
    await live?.live.close();
    await storage?.close();
    await new Promise((resolve) => hooks?.server.close(resolve));
  });

  it('publishes H.264 + Opus over WHIP into a two-rung HLS ladder, archived, counted and listed', async () => {
    const destination = await live.call(
      T.createDestination,
      {
        bucket_uri: 's3://archive/recordings',
        aws_end_point: endPoint,
        aws_access_key_id: 'S3RVER',
        aws_secret_access_key: 'S3RVER',
      },
      token,
    );
    const created = await live.call(
      T.createHls,
      {
        hls: [
          {
            durationSeconds: 1,
            video: { width: 320, height: 180, fps: 15, bps: 300_000, codec: 'h264_main' },
            audio: { bps: 70_000 },
            archive: { archive_destination_id: destination.body.archive_destination_id },
          },
          {
            durationSeconds: 2,
            startTimeOffset: -3,
            video: { width: 160, height: 90, fps: 15, bps: 120_000, codec: 'h264_baseline' },
            audio: { bps: 32_000 },
          },
        ],
        auth_webhook_url: `${hooks.url}/auth/allow`,
        event_webhook_url: `${hooks.url}/events`,
      },
      token,
    );
    const channelId = created.body.channel_id as string;

    const options = { whipUrl: whip(channelId), codec: 'h264', width: 320, height: 180, fps: 15 } as const;
    const publisher = await start({ ...options, bitrate: '600k' });
    expect(publisher).toMatchObject({ status: 201, error: '' });
    expect(publisher.location).toMatch(new RegExp(`^/whip/${channelId}/[0-9a-f]+$`));
    expect(hooks.calls.find((call) => call.path === '/auth/allow')?.body).toMatchObject({
      channel_id: channelId,
      role: 'sendonly',
    });

    // One publisher per channel.
    const second = await start(options);
    expect(second.status).toBe(409);

    const { connection_id: connectionId, playlist_url: masterUrl } = await playlistUrl(channelId);
    expect(masterUrl).toBe(
      `http://localhost:${server.deps.config.LIVE_PORT}/hls/${channelId}/${connectionId}/master.m3u8`,
    );
    const localMaster = `${live.baseUrl}${new URL(masterUrl).pathname}`;
    const master = await fetch(localMaster);
    expect(master.headers.get('content-type')).toBe('application/vnd.apple.mpegurl');
    expect(master.headers.get('cache-control')).toBe('public, max-age=1');
    expect(master.headers.get('access-control-allow-origin')).toBe('*');
    const masterText = await master.text();
    expect(masterText).toContain(
      '#EXT-X-STREAM-INF:BANDWIDTH=400400,RESOLUTION=320x180,FRAME-RATE=15.000,CODECS="avc1.4d4015,mp4a.40.2"\n0/index.m3u8',
    );
    expect(masterText).toContain(
      'RESOLUTION=160x90,FRAME-RATE=15.000,CODECS="avc1.42e015,mp4a.40.2"\n1/index.m3u8',
    );
    await waitFor(
      async () => hooks.calls.find((call) => call.body.type === 'notify.playlist_url'),
      5_000,
      'the playlist webhook',
    ).then((call) =>
      expect(call.body).toEqual({
        channel_id: channelId,
        connection_id: connectionId,
        timestamp: expect.any(String),
        type: 'notify.playlist_url',
        playlist_url: masterUrl,
      }),
    );

    // The console sees the live state through the database.
    const { email } = await createTestUser(server.deps, {
      accountId,
      permission: Permission.channel | Permission.statistics,
    });
    const consoleClient = await loggedIn(server.baseUrl, email);
    const listed = await consoleClient.call('channel.list');
    expect(listed.body.channels).toEqual([
      expect.objectContaining({
        id: channelId,
        activeConnectionCount: 1,
        hlsUrl: masterUrl,
        status: 'normal',
      }),
    ]);

    const base = localMaster.replace(/master\.m3u8$/, '');
    const low = await segmentsOf(`${base}1/index.m3u8`, 2);
    expect(await text(`${base}1/index.m3u8`)).toMatch(/^#EXT-X-START:TIME-OFFSET=-3$/m);
    const high = await segmentsOf(`${base}0/index.m3u8`, 5);
    expect(high.segments.length).toBeGreaterThanOrEqual(5);

    const segment = await fetch(`${base}0/${high.segments.at(-1)}`);
    expect(segment.headers.get('content-type')).toBe('video/mp4');
    expect(segment.headers.get('cache-control')).toBe('public, max-age=86400, immutable');
    const checks: [
      string,
      string[],
      { width: number; height: number; profile: string; bps: number; audio: number },
    ][] = [
      [
        `${base}0/`,
        high.segments.slice(1),
        { width: 320, height: 180, profile: 'Main', bps: 300_000, audio: 64000 },
      ],
      [
        `${base}1/`,
        low.segments,
        { width: 160, height: 90, profile: 'Constrained Baseline', bps: 120_000, audio: 32000 },
      ],
    ];
    for (const [prefix, names, expected] of checks) {
      const files = [];
      for (const name of names) {
        const file = join(scratch, `${channelId}-${expected.width}-${name}`);
        // Each fMP4 segment after the init segment (EXT-X-MAP), as a player joins them.
        const init = Buffer.from(await (await fetch(`${prefix}init.mp4`)).arrayBuffer());
        writeFileSync(
          file,
          Buffer.concat([init, Buffer.from(await (await fetch(`${prefix}${name}`)).arrayBuffer())]),
        );
        files.push(file);
      }
      const probed = await probe(files[0]!);
      const videoStream = probed.streams.find((stream) => stream.codec_type === 'video')!;
      expect(videoStream).toMatchObject({
        codec_name: 'h264',
        profile: expected.profile,
        width: expected.width,
        height: expected.height,
      });
      expect(probed.streams.find((stream) => stream.codec_type === 'audio')).toMatchObject({
        codec_name: 'aac',
        sample_rate: '48000',
      });
      // The video bitrate over whole segments: bytes of the video packets per second of frames
      // (constant frame rate, so frames / fps is the duration).
      let bytes = 0;
      let seconds = 0;
      for (const file of files) {
        const { stdout } = await run('ffprobe', [
          '-v',
          'error',
          '-select_streams',
          'v:0',
          '-show_entries',
          'packet=size',
          '-of',
          'csv=p=0',
          file,
        ]);
        for (const line of stdout.split('\n').filter((row) => /^\d/.test(row))) {
          bytes += Number.parseInt(line, 10);
          seconds += 1 / 15;
        }
      }
      const bitrate = (bytes * 8) / seconds;
      expect(bitrate).toBeGreaterThan(expected.bps * 0.8);
      expect(bitrate).toBeLessThan(expected.bps * 1.2);
    }

    // WHIP DELETE ends the session; the channel is free and reports no playlist any more.
    await publisher.stop();
    expect(live.live.sessionCount()).toBe(0);
    expect(await live.call(T.playlists, { channel_id: channelId }, token)).toMatchObject({
      body: { hls: [] },
    });
    const released = await server.deps.db
      .selectFrom('channels')
      .select(['active_connections', 'connection_id'])
      .where('id', '=', channelId)
      .executeTakeFirstOrThrow();
    expect(released).toEqual({ active_connections: 0, connection_id: null });

    // The archived rendition (index 0) is in the bucket, segments and playlist, each announced,
    // once the session's upload jobs have run: each file waits in archive_uploads until then (the
    // last ones were still queued on a loaded host, 4 segments of 5 in the bucket).
    await waitFor(
      async () => {
        const waiting = await server.deps.db
          .selectFrom('archive_uploads')
          .select((eb) => eb.fn.countAll<number>().as('files'))
          .where('connection_id', '=', connectionId)
          .executeTakeFirstOrThrow();
        return Number(waiting.files) === 0 || undefined;
      },
      15_000,
      'the archive uploads',
    );
    const objects = await s3.send(new ListObjectsV2Command({ Bucket: 'archive', Prefix: 'recordings/' }));
    const keys = (objects.Contents ?? []).map((object) => object.Key!);
    const archivePrefix = `recordings/${channelId}/${connectionId}/0/`;
    expect(keys).toContain(`${archivePrefix}index.m3u8`);
    expect(keys.filter((key) => key.endsWith('.ts')).length).toBeGreaterThanOrEqual(5);
    expect(keys.every((key) => key.startsWith(archivePrefix))).toBe(true);
    // Events go out several at a time, so they may arrive in any order.
    const firstSegment = await waitFor(
      async () => {
        const found = hooks.calls.filter((call) => call.body.type === 'imageflux.archive_created');
        return found.length >= 6
          ? found.find((call) => JSON.stringify(call.body).includes('/0/seg0.ts'))
          : undefined;
      },
      5_000,
      'archive webhooks',
    );
    expect(firstSegment.body).toEqual({
      channel_id: channelId,
      type: 'imageflux.archive_created',
      timestamp: expect.any(String),
      data: {
        dest_uri: `s3://archive/${archivePrefix}seg0.ts`,
        file_path: `${archivePrefix}seg0.ts`,
        size: expect.any(Number),
        file_type: 'ts',
      },
    });

    await live.live.flushUsage();
    const usage = await server.deps.db
      .selectFrom('live_usage_hourly')
      .selectAll()
      .where('channel_id', '=', channelId)
      .executeTakeFirstOrThrow();
    expect(usage.organization_id).toBe(organizationId);
    expect(usage.connected_seconds).toBeGreaterThanOrEqual(4);
    expect(usage.max_concurrent).toBe(1);
    expect(usage.connections).toBe(1);
    expect(usage.bytes_in).toBeGreaterThan(100_000);
    expect(usage.hls_requests).toBeGreaterThanOrEqual(10);
    expect(usage.hls_bytes_out).toBeGreaterThan(50_000);
    const statistics = await consoleClient.call('channel.statistics', {
      from: new Date(Date.now() - 3_600_000).toISOString(),
      to: new Date(Date.now() + 3_600_000).toISOString(),
    });
    expect(statistics.body.channels).toEqual([
      expect.objectContaining({
        channelId,
        connections: 1,
        maxConcurrent: 1,
        hlsRequests: usage.hls_requests,
      }),
    ]);
  });

  it("keeps a WHIP publisher's ladder on the publisher's clock: segments come a second apart", async () => {
    const created = await live.call(
      T.createHls,
      { hls: [{ durationSeconds: 1, video: { width: 320, height: 180, fps: 30, bps: 300_000 } }] },
      token,
    );
    const channelId = created.body.channel_id as string;
    // 60 fps: werift's RTP-to-WebM timing lost two thirds of a millisecond on every frame (16 ms
    // for 16.7), so the ladder's video ran 4 % slow and its segments came ever later.
    const publisher = await start({
      whipUrl: whip(channelId),
      codec: 'h264',
      width: 320,
      height: 180,
      fps: 60,
    });
    expect(publisher).toMatchObject({ status: 201, error: '' });
    const { playlist_url: masterUrl } = await playlistUrl(channelId);
    const media = `${live.baseUrl}${new URL(masterUrl).pathname.replace(/master\.m3u8$/, '0/index.m3u8')}`;
    // When the playlist first listed each segment, polled every 20 ms from segment 3 to 23, less
    // its media time: a late look at the playlist only adds to it, so the least of each end's
    // five is the ladder's delay then.
    const lateness = new Map<number, number>();
    await waitFor(
      async () => {
        const { sequence: first, segments } = mediaPlaylist(await text(media));
        const newest = first + segments.length - 1;
        if (newest >= 3 && !lateness.has(newest)) lateness.set(newest, Date.now() - newest * 1000);
        return newest >= 23 ? true : undefined;
      },
      40_000,
      'segment 23',
      20,
    );
    const least = (from: number) =>
      Math.min(...[0, 1, 2, 3, 4].map((i) => lateness.get(from + i) ?? Infinity));
    const drift = least(19) - least(4);
    console.log(`a 60 fps WHIP publisher's ladder fell ${drift} ms behind over 15 s`);
    // 4 % slow would be 600 ms.
    expect(Math.abs(drift)).toBeLessThan(250);
  }, 60_000);

  it('encrypts VP8-published segments with the channel key and EXT-X-KEY', async () => {
    const created = await live.call(
      T.createHls,
      {
        hls: [{ durationSeconds: 1, video: { width: 320, height: 180, fps: 15, bps: 250_000 } }],
        encrypt_key_uri: 'https://keys.example.com/key?viewer=1',
      },
      token,
    );
    const channelId = created.body.channel_id as string;
    const { kid } = await server.deps.db
      .selectFrom('channels')
      .select('kid')
      .where('id', '=', channelId)
      .executeTakeFirstOrThrow();
    const publisher = await start({
      whipUrl: whip(channelId),
      codec: 'vp8',
      width: 320,
      height: 180,
      fps: 15,
    });
    expect(publisher.status).toBe(201);
    const { playlist_url: masterUrl } = await playlistUrl(channelId);
    const media = `${live.baseUrl}${new URL(masterUrl).pathname.replace(/master\.m3u8$/, '0/index.m3u8')}`;
    await segmentsOf(media, 2);
    const playlist = await text(media);
    const { sequence, segments } = mediaPlaylist(playlist);
    // Each segment's own EXT-X-KEY names the key and, as IV, the segment's media sequence number.
    const lines = playlist.split('\n');
    const keyLine = lines[lines.indexOf(segments[1]!) - 2];
    const iv = Buffer.alloc(16);
    iv.writeUInt32BE(sequence + 1, 12);
    expect(keyLine).toBe(
      `#EXT-X-KEY:METHOD=AES-128,URI="https://keys.example.com/key?viewer=1&kid=${kid}",IV=0x${iv.toString('hex')}`,
    );
    const encrypted = Buffer.from(
      await (await fetch(media.replace(/index\.m3u8$/, segments[1]!))).arrayBuffer(),
    );
    // Plain MPEG-TS starts every 188-byte packet with its sync byte (0x47); ciphertext has one
    // there about once in 256 (the first byte alone made this test fail once in 256 runs).
    const packetStarts = Array.from(
      { length: Math.floor(encrypted.length / 188) },
      (_, i) => encrypted[i * 188],
    );
    expect(packetStarts.filter((byte) => byte === 0x47).length).toBeLessThan(packetStarts.length / 2);

    const key = (await live.call(T.key, { kid }, token)).body.encrypt_key as string;
    const decipher = createDecipheriv('aes-128-cbc', Buffer.from(key, 'hex'), iv);
    const plain = Buffer.concat([decipher.update(encrypted), decipher.final()]);
    expect(plain.length % 188).toBe(0);
    for (let offset = 0; offset < plain.length; offset += 188) expect(plain[offset]).toBe(0x47);
    // A wrong IV spoils only the first 16 bytes: the first packet's table section (ffmpeg's SDT)
    // must still pass its CRC.
    const section = 5 + plain[4]!;
    const sectionLength = ((plain[section + 1]! & 0x0f) << 8) | plain[section + 2]!;
    expect(mpegCrc32(plain.subarray(section, section + 3 + sectionLength))).toBe(0);
    const file = join(scratch, `${channelId}.ts`);
    writeFileSync(file, plain);
    const probed = await probe(file);
    expect(probed.streams.find((stream) => stream.codec_type === 'video')).toMatchObject({
      codec_name: 'h264',
      profile: 'High',
      width: 320,
      height: 180,
    });
    await publisher.stop();
  });

  it('serves HLS from any live process of the fleet, metered once, by the process the viewer asked', async () => {
    const peer = await startLive(server);
    try {
      const created = await live.call(
        T.createHls,
        { hls: [{ durationSeconds: 1, video: { width: 160, height: 90, fps: 15, bps: 100_000 } }] },
        token,
      );
      const channelId = created.body.channel_id as string;
      const publisher = await start({
        whipUrl: whip(channelId),
        codec: 'vp8',
        width: 160,
        height: 90,
        fps: 15,
      });
      expect(publisher.status).toBe(201);
      const { playlist_url: masterUrl } = await playlistUrl(channelId);
      const path = new URL(masterUrl).pathname;
      const { segments } = await segmentsOf(
        `${live.baseUrl}${path.replace(/master\.m3u8$/, '0/index.m3u8')}`,
        2,
      );

      const viaPeer = await fetch(`${peer.baseUrl}${path}`);
      expect(viaPeer.status).toBe(200);
      expect(viaPeer.headers.get('content-type')).toBe('application/vnd.apple.mpegurl');
      expect(viaPeer.headers.get('access-control-allow-origin')).toBe('*');
      expect(await viaPeer.text()).toBe(await text(`${live.baseUrl}${path}`));
      const segment = await fetch(`${peer.baseUrl}${path.replace(/master\.m3u8$/, `0/${segments[0]}`)}`);
      expect(segment.status).toBe(200);
      expect(segment.headers.get('content-type')).toBe('video/mp4');
      expect(segment.headers.get('cache-control')).toBe('public, max-age=86400, immutable');
      expect((await fetch(`${peer.baseUrl}${path.replace('master', 'missing')}`)).status).toBe(404);
      // LL-HLS directives go along to the process holding the publisher, which judges them.
      const media = `${peer.baseUrl}${path.replace(/master\.m3u8$/, '0/index.m3u8')}`;
      expect((await fetch(`${media}?_HLS_msn=999999`)).status).toBe(400);

      // Each process reports its own part: the publisher where it is, the viewer where it came in.
      const metric = async (target: LiveUnderTest, name: string) =>
        (await target.live.metrics.getSingleMetric(name)!.get()).values;
      expect((await metric(live, 'ukiyo_live_publishers'))[0]!.value).toBe(1);
      expect((await metric(peer, 'ukiyo_live_publishers'))[0]!.value).toBe(0);
      expect((await metric(peer, 'ukiyo_live_viewers'))[0]!.value).toBe(1);
      expect(await metric(peer, 'ukiyo_live_hls_requests_total')).toContainEqual(
        expect.objectContaining({ labels: { kind: 'segment', status: '200', source: 'peer' }, value: 1 }),
      );
      // Delivery is metered once, by the process the viewer asked.
      await Promise.all([live.live.flushUsage(), peer.live.flushUsage()]);
      const before = await hlsRequestsOf(channelId);
      await fetch(`${peer.baseUrl}${path}`);
      await Promise.all([live.live.flushUsage(), peer.live.flushUsage()]);
      expect(await hlsRequestsOf(channelId)).toBe(before + 1);
      await publisher.stop();
    } finally {
      await peer.live.close();
    }
  });

  it('offers publishers and viewers the configured UDP ports, and announced addresses', async () => {
    const fenced = await startLive(
      server,
      {},
      { LIVE_ICE_PORT_RANGE: [41000, 41019], LIVE_ICE_ADDRESSES: ['192.0.2.10'] },
    );
    try {
      const created = await fenced.call(
        T.createHls,
        { hls: [{ video: { width: 160, height: 90, fps: 15, bps: 100_000 } }] },
        token,
      );
      const channelId = created.body.channel_id as string;
      const publisher = await start({
        whipUrl: `${fenced.baseUrl}/whip/${channelId}`,
        codec: 'h264',
        width: 160,
        height: 90,
        fps: 15,
      });
      expect(publisher.status).toBe(201);
      // The viewer's peer connection is made in a viewer process, told the same settings.
      const viewer = await view(`${fenced.baseUrl}/whep/${channelId}`, join(scratch, 'fenced.h264'));
      expect(viewer.status).toBe(201);
      for (const answer of [publisher.answer, viewer.answer]) {
        const candidates = answer.split(/\r?\n/).filter((line) => line.startsWith('a=candidate:'));
        expect(candidates.length).toBeGreaterThan(0);
        for (const candidate of candidates) {
          const port = Number(candidate.split(' ')[5]);
          expect(port).toBeGreaterThanOrEqual(41000);
          expect(port).toBeLessThanOrEqual(41019);
        }
        expect(candidates.some((candidate) => candidate.split(' ')[4] === '192.0.2.10')).toBe(true);
      }
      await viewer.stop();
      await publisher.stop();
    } finally {
      await fenced.live.close();
    }
  });

  it('refuses publishers the auth webhook refuses, unknown channels and non-SDP bodies', async () => {
    const created = await live.call(
      T.createHls,
      {
        hls: [{ video: { width: 160, height: 90, fps: 15, bps: 100_000 } }],
        auth_webhook_url: `${hooks.url}/auth/deny`,
      },
      token,
    );
    const channelId = created.body.channel_id as string;
    const refused = await start({ whipUrl: whip(channelId), codec: 'vp8', width: 160, height: 90, fps: 15 });
    expect(refused.status).toBe(403);
    expect(refused.error).toContain('auth webhook');

    const stranger = await apiToken(
      server,
      (await createTenant(server.deps, { isLive: true })).organizationIds[0]!,
    );
    const foreign = await start({
      whipUrl: whip(channelId),
      token: stranger,
      codec: 'vp8',
      width: 160,
      height: 90,
      fps: 15,
    });
    expect(foreign.status).toBe(404);

    const notSdp = await fetch(whip(channelId), {
      method: 'POST',
      headers: { 'Content-Type': 'text/plain', Authorization: `Bearer ${token}` },
      body: 'hello',
    });
    expect(notSdp.status).toBe(415);
    const open = (
      await live.call(
        T.createHls,
        { hls: [{ video: { width: 160, height: 90, fps: 15, bps: 100_000 } }] },
        token,
      )
    ).body.channel_id as string;
    for (const [body, status] of [
      ['v=0\r\nm=video 9 UDP/TLS/RTP/SAVPF 96\r\n', 400],
      ['v=0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\na=rtpmap:111 opus/48000/2\r\n', 400],
    ] as const) {
      const refusedOffer = await fetch(whip(open), {
        method: 'POST',
        headers: { 'Content-Type': 'application/sdp', Authorization: `Bearer ${token}` },
        body,
      });
      expect(refusedOffer.status).toBe(status);
      expect(((await refusedOffer.json()) as { error: string }).error).toMatch(/offer/);
    }
    // Refused offers leave the channel free.
    const row = await server.deps.db
      .selectFrom('channels')
      .select('active_connections')
      .where('id', '=', open)
      .executeTakeFirstOrThrow();
    expect(row.active_connections).toBe(0);
    const preflight = await fetch(whip(channelId), {
      method: 'OPTIONS',
      headers: {
        Origin: 'https://publisher.example.com',
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'authorization, content-type',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    expect(preflight.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('authorization');
    const unauthenticated = await fetch(whip(channelId), {
      method: 'POST',
      headers: { 'Content-Type': 'application/sdp', Origin: 'https://publisher.example.com' },
      body: 'v=0',
    });
    expect(unauthenticated.status).toBe(401);
    expect(unauthenticated.headers.get('access-control-expose-headers')).toContain('Location');
  });

  // LIVE_CYCLES=100 for the long run (about 5 minutes); the suite runs 3.
  const cycles = Number(process.env.LIVE_CYCLES ?? 3);
  it(
    'releases ffmpeg, sockets and files over create / publish / delete cycles',
    { timeout: 20_000 + cycles * 10_000 },
    async () => {
      const handlesBefore = process.getActiveResourcesInfo().length;
      const { email } = await createTestUser(server.deps, { accountId, permission: Permission.channel });
      const consoleClient = await loggedIn(server.baseUrl, email);
      const cycled: string[] = [];
      for (let i = 0; i < cycles; i++) {
        const created = await live.call(
          T.createHls,
          { hls: [{ video: { width: 160, height: 90, fps: 15, bps: 100_000 } }] },
          token,
        );
        const channelId = created.body.channel_id as string;
        cycled.push(channelId);
        const publisher = await start({
          whipUrl: whip(channelId),
          codec: 'vp8',
          width: 160,
          height: 90,
          fps: 15,
        });
        expect(publisher.status).toBe(201);
        await playlistUrl(channelId);
        expect(live.live.sessionCount()).toBe(1);
        if (i % 2 === 0) {
          // DeleteChannel while publishing: the publisher is cut off, ffmpeg stopped, files gone.
          expect((await live.call(T.remove, { channel_id: channelId }, token)).status).toBe(200);
        } else {
          // The console's delete marks the channel; the live process carries it out.
          expect((await consoleClient.call('channel.delete', { id: channelId })).status).toBe(200);
          const deleting = await consoleClient.call('channel.list');
          expect(deleting.body.channels).toEqual(
            expect.arrayContaining([expect.objectContaining({ id: channelId, status: 'deleting' })]),
          );
          await live.live.tick();
        }
        expect(live.live.sessionCount()).toBe(0);
        const whipAgain = await start({
          whipUrl: whip(channelId),
          codec: 'vp8',
          width: 160,
          height: 90,
          fps: 15,
        });
        expect(whipAgain.status).toBe(404);
        await publisher.stop(false);
      }
      expect(await childFfmpegCount()).toBe(0);
      expect(readdirSync(live.dir).filter((name) => cycled.includes(name))).toEqual([]);
      // Timers and sockets of the sessions are gone (a little slack for pooled connections).
      expect(process.getActiveResourcesInfo().length).toBeLessThanOrEqual(handlesBefore + 4);
    },
  );

  it('removes every file it wrote on close', async () => {
    expect(readdirSync(live.dir).length).toBeGreaterThan(0);
    await live.live.close();
    expect(readdirSync(live.dir)).toEqual([]);
    expect(live.live.sessionCount()).toBe(0);
  });
});
