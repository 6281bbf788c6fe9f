import { Permission } from '@ukiyo/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant, type TestServer, testServer } from '@ukiyo/server/testing';
import { apiToken, startLive, type LiveUnderTest } from './helpers.ts';

const T = {
  createHls: 'ImageFlux_20200316.CreateMultistreamChannelWithHLS',
  create: 'ImageFlux_20200316.CreateMultistreamChannel',
  playlists: 'ImageFlux_20200207.ListPlaylistURLs',
  remove: 'ImageFlux_20180501.DeleteChannel',
  list: 'ImageFlux_20200729.ListChannelIDs',
  createDestination: 'ImageFlux_20190205.CreateArchiveDestination',
  deleteDestination: 'ImageFlux_20190205.DeleteArchiveDestination',
  listDestinations: 'ImageFlux_20190205.ListArchiveDestinations',
  key: 'ImageFlux_20200707.GetEncryptKey',
};

const rendition = { durationSeconds: 1, video: { width: 640, height: 360, fps: 30, bps: 800_000 } };

describe('live API', () => {
  let server: TestServer;
  let live: LiveUnderTest;
  let tokenA: string;
  let tokenB: string;
  let orgA: number;

  beforeAll(async () => {
    server = await testServer();
    live = await startLive(server);
    const a = await createTenant(server.deps, { isLive: true });
    const b = await createTenant(server.deps, { isLive: true });
    orgA = a.organizationIds[0]!;
    tokenA = await apiToken(server, orgA);
    tokenB = await apiToken(server, b.organizationIds[0]!, null);
  });

  afterAll(async () => {
    await live.live.close();
  });

  it('refuses missing tokens, tokens without the live permission and image organizations', async () => {
    const none = await fetch(`${live.baseUrl}/`, { method: 'POST', headers: { 'X-Sora-Target': T.list } });
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer');

    const cacheOnly = await apiToken(server, orgA, Permission.cache | Permission.statistics);
    expect((await live.call(T.list, {}, cacheOnly)).status).toBe(403);

    const image = await createTenant(server.deps, { isLive: false });
    const imageToken = await apiToken(server, image.organizationIds[0]!, null);
    const refused = await live.call(T.list, {}, imageToken);
    expect(refused).toMatchObject({ status: 403, body: { ok: false } });
    expect(refused.body.error).toMatch(/live streaming/);
  });

  it('names an unknown or missing target and a body that is not JSON', async () => {
    const unknown = await live.call('ImageFlux_20200316.Nope', {}, tokenA);
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toContain('unknown X-Sora-Target: ImageFlux_20200316.Nope');
    const wrongVersion = await live.call('ImageFlux_20990101.ListChannelIDs', {}, tokenA);
    expect(wrongVersion.status).toBe(400);
    const notJson = await live.call(T.list, '{nope', tokenA);
    expect(notJson).toMatchObject({ status: 400, body: { error: 'the body must be JSON' } });
  });

  it('validates renditions with field paths', async () => {
    const bad = await live.call(
      T.createHls,
      {
        hls: [
          rendition,
          { durationSeconds: 0, video: { width: 20, height: 5000, codec: 'vp9', fps: 30, bps: 1e6 } },
        ],
        encrypt_key_uri: 'ftp://keys.example.com/',
      },
      tokenA,
    );
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({
      ok: false,
      error: 'validation error',
      invalids: {
        'hls.1.durationSeconds': ['validation.between|min=1&max=10'],
        'hls.1.video.width': ['validation.between|min=36&max=4096'],
        'hls.1.video.height': ['validation.between|min=36&max=4096'],
        'hls.1.video.codec': ['validation.invalid'],
        encrypt_key_uri: ['validation.invalid'],
      },
    });
    const empty = await live.call(T.createHls, { hls: [] }, tokenA);
    expect(empty.body.invalids).toEqual({ hls: ['validation.required'] });
    const missing = await live.call(T.createHls, { hls: [{ video: { width: 640 } }] }, tokenA);
    expect(missing.body.invalids).toEqual({ 'hls.0.video.height': ['validation.required'] });
  });

  it('creates channels with the rendition defaults and audio bitrates rounded down', async () => {
    const created = await live.call(
      T.createHls,
      {
        hls: [
          { video: { width: 640, height: 360 } },
          { ...rendition, audio: { bps: 100_000 } },
          { ...rendition, audio: { bps: 1000 } },
          { ...rendition, audio: { bps: 500_000 }, startTimeOffset: -2.5 },
        ],
      },
      tokenA,
    );
    expect(created.status).toBe(200);
    expect(Object.keys(created.body).sort()).toEqual([
      'channel_id',
      'rtmp_url',
      'rtmps_url',
      'sora_url',
      'srt_url',
      'stream_key',
      'whip_url',
    ]);
    const channelId = created.body.channel_id as string;
    expect(created.body.sora_url).toMatch(/^ws:\/\/.*\/signaling$/);
    expect(created.body.whip_url).toMatch(new RegExp(`^http://.*/whip/${channelId}$`));
    expect(created.body.rtmp_url).toMatch(/^rtmp:\/\/[^/]+:\d+\/live$/);
    expect(created.body.rtmps_url).toBeNull();
    // The stream key names its channel and carries the channel's secret, which the SRT URL's
    // passphrase repeats.
    const [keyChannel, secret] = (created.body.stream_key as string).split('.');
    expect(keyChannel).toBe(channelId);
    expect(secret).toMatch(/^[\w-]{32}$/);
    expect(created.body.srt_url).toMatch(
      new RegExp(`^srt://[^/]+:\\d+\\?streamid=${channelId}&passphrase=${secret}$`),
    );
    const row = await server.deps.db
      .selectFrom('channels')
      .selectAll()
      .where('id', '=', created.body.channel_id as string)
      .executeTakeFirstOrThrow();
    const hls = (row.settings as { hls: Record<string, unknown>[] }).hls;
    expect(hls[0]).toEqual({
      durationSeconds: 1,
      video: { width: 640, height: 360, fps: 30, bps: 1_000_000, codec: 'h264_high' },
      audio: { bps: 96000 },
      archive: { archive_destination_id: '' },
    });
    expect(hls.slice(1).map((item) => (item.audio as { bps: number }).bps)).toEqual([96000, 32000, 320000]);
    expect(hls[3]!.startTimeOffset).toBe(-2.5);
    expect(row.organization_id).toBe(orgA);
    expect(row.kid).toBeNull();
  });

  it('lists, shows playlists of and deletes only the organization’s own channels', async () => {
    const first = (await live.call(T.createHls, { hls: [rendition] }, tokenA)).body.channel_id as string;
    const plain = await live.call(T.create, { event_webhook_url: 'https://hooks.example.com/e' }, tokenA);
    expect(plain.status).toBe(200);
    const second = plain.body.channel_id as string;
    const theirs = (await live.call(T.createHls, { hls: [rendition] }, tokenB)).body.channel_id as string;

    const listA = (await live.call(T.list, {}, tokenA)).body.channel_ids as string[];
    expect(listA).toEqual(expect.arrayContaining([first, second]));
    expect(listA).not.toContain(theirs);
    expect((await live.call(T.list, {}, tokenB)).body.channel_ids).toEqual([theirs]);

    expect(await live.call(T.playlists, { channel_id: first }, tokenA)).toEqual({
      status: 200,
      body: { channel_id: first, hls: [] },
    });
    expect((await live.call(T.playlists, { channel_id: theirs }, tokenA)).status).toBe(404);
    expect((await live.call(T.playlists, {}, tokenA)).body.invalids).toEqual({
      channel_id: ['validation.required'],
    });

    expect((await live.call(T.remove, { channel_id: theirs }, tokenA)).status).toBe(404);
    expect(await live.call(T.remove, { channel_id: first }, tokenA)).toEqual({ status: 200, body: {} });
    expect((await live.call(T.list, {}, tokenA)).body.channel_ids).not.toContain(first);
    // A deleted channel is gone for good: not found again, and its id never comes back.
    expect((await live.call(T.remove, { channel_id: first }, tokenA)).status).toBe(404);
    expect((await live.call(T.playlists, { channel_id: first }, tokenA)).status).toBe(404);
    const row = await server.deps.db
      .selectFrom('channels')
      .select(['status', 'deleted_at'])
      .where('id', '=', first)
      .executeTakeFirstOrThrow();
    expect(row.status).toBe('deleted');
    expect(row.deleted_at).not.toBeNull();
  });

  it('keeps archive destinations per organization with their keys sealed', async () => {
    const bad = await live.call(T.createDestination, { bucket_uri: 'https://bucket' }, tokenA);
    expect(bad.body.invalids).toEqual({ bucket_uri: ['validation.invalid'] });
    const created = await live.call(
      T.createDestination,
      {
        bucket_uri: 's3://archive-bucket/prefix',
        aws_end_point: 'http://127.0.0.1:9',
        aws_access_key_id: 'AKIDEXAMPLE',
        aws_secret_access_key: 'very-secret-key',
      },
      tokenA,
    );
    expect(created.status).toBe(200);
    const id = created.body.archive_destination_id as string;
    const row = await server.deps.db
      .selectFrom('archive_destinations')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(row.config_enc).not.toContain('very-secret-key');
    expect((await live.call(T.listDestinations, {}, tokenA)).body.archive_destinations).toEqual(
      expect.arrayContaining([{ archive_destination_id: id, bucket_uri: 's3://archive-bucket/prefix' }]),
    );
    expect((await live.call(T.listDestinations, {}, tokenB)).body.archive_destinations).toEqual([]);

    // Renditions may archive only to the organization's own destinations.
    const foreign = await live.call(
      T.createHls,
      { hls: [{ ...rendition, archive: { archive_destination_id: id } }] },
      tokenB,
    );
    expect(foreign).toMatchObject({
      status: 400,
      body: { invalids: { 'hls.0.archive.archive_destination_id': ['validation.invalid'] } },
    });
    const own = await live.call(
      T.createHls,
      { hls: [{ ...rendition, archive: { archive_destination_id: id } }] },
      tokenA,
    );
    expect(own.status).toBe(200);

    expect((await live.call(T.deleteDestination, { archive_destination_id: id }, tokenB)).status).toBe(404);
    expect(await live.call(T.deleteDestination, { archive_destination_id: id }, tokenA)).toEqual({
      status: 200,
      body: {},
    });
    expect((await live.call(T.deleteDestination, { archive_destination_id: id }, tokenA)).status).toBe(404);
  });

  it('gives the channel key only to its own organization', async () => {
    const created = await live.call(
      T.createHls,
      { hls: [rendition], encrypt_key_uri: 'https://keys.example.com/key' },
      tokenA,
    );
    const row = await server.deps.db
      .selectFrom('channels')
      .select(['kid', 'encrypt_key_enc'])
      .where('id', '=', created.body.channel_id as string)
      .executeTakeFirstOrThrow();
    expect(row.kid).toMatch(/^[0-9a-f]{24}$/);
    const key = await live.call(T.key, { kid: row.kid }, tokenA);
    expect(key.status).toBe(200);
    expect(key.body.encrypt_key).toMatch(/^[0-9a-f]{32}$/);
    expect(row.encrypt_key_enc).not.toContain(key.body.encrypt_key as string);
    expect((await live.call(T.key, { kid: row.kid }, tokenB)).status).toBe(404);
    expect((await live.call(T.key, { kid: 'nope' }, tokenA)).status).toBe(404);
  });

  it('accepts the API under /api too', async () => {
    const response = await fetch(`${live.baseUrl}/api`, {
      method: 'POST',
      headers: { 'X-Sora-Target': T.list, Authorization: `Bearer ${tokenB}` },
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toHaveProperty('channel_ids');
  });
});

describe('live API without ALLOW_PRIVATE_ORIGINS', () => {
  let server: TestServer;
  let live: LiveUnderTest;
  let token: string;

  beforeAll(async () => {
    server = await testServer();
    live = await startLive(server, {}, { ALLOW_PRIVATE_ORIGINS: false });
    const tenant = await createTenant(server.deps, { isLive: true });
    token = await apiToken(server, tenant.organizationIds[0]!);
  });

  afterAll(async () => {
    await live.live.close();
  });

  it('refuses webhooks on private addresses when the channel is created', async () => {
    const refused = await live.call(
      T.createHls,
      {
        hls: [rendition],
        auth_webhook_url: 'http://127.0.0.1:9000/auth',
        event_webhook_url: 'http://[fd00::1]/events',
      },
      token,
    );
    expect(refused).toMatchObject({
      status: 400,
      body: {
        ok: false,
        error: 'validation error',
        invalids: {
          auth_webhook_url: ['validation.privateAddress'],
          event_webhook_url: ['validation.privateAddress'],
        },
      },
    });
    const plain = await live.call(T.create, { event_webhook_url: 'http://10.0.0.8/events' }, token);
    expect(plain.body).toMatchObject({ invalids: { event_webhook_url: ['validation.privateAddress'] } });
    const accepted = await live.call(
      T.create,
      { event_webhook_url: 'https://[2606:4700:4700::1111]/' },
      token,
    );
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
  });

  it('refuses archive destinations whose endpoint is on a private address', async () => {
    const refused = await live.call(
      T.createDestination,
      { bucket_uri: 's3://archive', aws_end_point: 'http://169.254.169.254:9000' },
      token,
    );
    expect(refused).toMatchObject({
      status: 400,
      body: { ok: false, invalids: { aws_end_point: ['validation.privateAddress'] } },
    });
    const accepted = await live.call(
      T.createDestination,
      { bucket_uri: 's3://archive', aws_end_point: 'https://8.8.8.8' },
      token,
    );
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
  });
});
