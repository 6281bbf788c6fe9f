import { randomBytes } from 'node:crypto';
import { chromium } from 'playwright-core';
import WebSocket from 'ws';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  AppProcess,
  createTenant,
  freePort,
  get,
  processEnv,
  sleep,
  type TestServer,
  testServer,
  until,
  testDatabaseUrl,
} from '@ukiyo/server/testing';
import { RawConnection } from '../src/testing/raw-http.ts';
import { apiToken, newestSegment, segmentNames } from './helpers.ts';
import { publish, type Publisher } from './publisher.ts';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../../../e2e/support/chromium.ts';
import { servePublisherPage } from './sora-publisher.ts';
import { soraViewer } from './sora-viewer.ts';

// `npm run start:live` twice on one PostgreSQL: a publisher on one process, a viewer on the
// other, as behind a load balancer. Needs a PostgreSQL server (DATABASE_URL, as CI's second
// integration run sets): embedded PGlite is single-process.
const databaseUrl = testDatabaseUrl();
const LIVE = 'apps/live/src/main.ts';

describe.skipIf(!databaseUrl)('live fleet: two live processes on PostgreSQL', () => {
  let harness: TestServer;
  let processes: AppProcess[] = [];
  const publishers: Publisher[] = [];

  const liveUrl = (proc: AppProcess) => `http://127.0.0.1:${proc.env.LIVE_PORT}`;
  const metrics = async (proc: AppProcess) =>
    (await get(Number(proc.env.METRICS_PORT), 'localhost', '/metrics')).body.toString();
  const metricValue = (text: string, line: string) =>
    Number(
      text
        .split('\n')
        .find((candidate) => candidate.startsWith(line))
        ?.split(' ')
        .at(-1) ?? Number.NaN,
    );

  beforeAll(async () => {
    harness = await testServer();
    const secretKey = randomBytes(32).toString('base64');
    processes = await Promise.all(
      ['live-1', 'live-2'].map(async (name) => {
        const port = await freePort();
        return new AppProcess(
          name,
          LIVE,
          await processEnv({
            DATABASE_URL: databaseUrl,
            SECRET_KEY: secretKey,
            LIVE_PORT: String(port),
            LIVE_INTERNAL_URL: `http://127.0.0.1:${port}`,
            LIVE_PUBLIC_URL: 'https://live.example.com',
            SHUTDOWN_GRACE_SECONDS: '5',
            // These tests pass viewers on, share and count them; the load guard's refusals
            // (live-whep.int.test.ts) would fail them on a loaded host.
            LIVE_MAX_EVENT_LOOP_UTILIZATION: '1',
          }),
          true,
        ).start();
      }),
    );
    await Promise.all(processes.map((proc) => proc.ready()));
  }, 120_000);

  // Each test's publisher ends with it: the holder transcodes one test's streams, not the file's.
  afterEach(async () => {
    await Promise.all(publishers.splice(0).map((publisher) => publisher.stop(false)));
  });

  afterAll(async () => {
    await Promise.all(processes.map((proc) => proc.stop('SIGKILL')));
  });

  /**
   * A tenant's channel (with `settings` beside its rendition), created through `createdThrough`
   * and published to on `publishedTo`: its id, its master playlist's URL as `createdThrough`
   * lists it, and the tenant's live API calls.
   */
  async function publishedChannel(
    createdThrough: AppProcess,
    publishedTo: AppProcess,
    settings: Record<string, unknown> = {},
  ) {
    const tenant = await createTenant(harness.deps, { isLive: true });
    const token = await apiToken(harness, tenant.organizationIds[0]!);
    const call = async (target: string, body: unknown) => {
      const response = await fetch(`${liveUrl(createdThrough)}/`, {
        method: 'POST',
        headers: { 'X-Sora-Target': target, Authorization: `Bearer ${token}` },
        body: JSON.stringify(body),
      });
      return (await response.json()) as Record<string, unknown>;
    };
    const created = await call('ImageFlux_20200316.CreateMultistreamChannelWithHLS', {
      hls: [{ durationSeconds: 1, video: { width: 160, height: 90, fps: 15, bps: 100_000 } }],
      ...settings,
    });
    const channelId = created.channel_id as string;
    const publisher = await publish({
      whipUrl: `${liveUrl(publishedTo)}/whip/${channelId}`,
      token,
      codec: 'vp8',
      width: 160,
      height: 90,
      fps: 15,
    });
    publishers.push(publisher);
    expect(publisher.status).toBe(201);
    const playlistUrl = await until(
      'the playlist URL',
      async () => {
        const listed = await call('ImageFlux_20200207.ListPlaylistURLs', { channel_id: channelId });
        return (listed.hls as { playlist_url: string }[])[0]?.playlist_url;
      },
      20_000,
      200,
    );
    return { channelId, playlistUrl, call };
  }

  /** The rendition's media playlist through `proc`, once it lists a segment. */
  const mediaPlaylist = (proc: AppProcess, path: string) =>
    until(
      `a media playlist through ${proc.name}`,
      async () => {
        const answer = await fetch(`${liveUrl(proc)}${path.replace('master', '0/index')}`);
        const text = await answer.text();
        return answer.status === 200 && text.includes('#EXTINF') ? text : undefined;
      },
      20_000,
      200,
    );

  it('publishes on one process and plays through the other, each reporting its part', async () => {
    const [first, second] = processes as [AppProcess, AppProcess];
    // Created through one process, published to through the other.
    const { channelId, playlistUrl } = await publishedChannel(second, first);
    expect(playlistUrl).toMatch(
      new RegExp(`^https://live\\.example\\.com/hls/${channelId}/[0-9a-f]+/master\\.m3u8$`),
    );
    const path = new URL(playlistUrl).pathname;
    const media = await mediaPlaylist(second, path);
    const segment = segmentNames(media)[0]!;
    const answer = await fetch(`${liveUrl(second)}${path.replace('master.m3u8', `0/${segment}`)}`);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('video/mp4');
    expect((await answer.arrayBuffer()).byteLength).toBeGreaterThan(1_000);

    const [firstMetrics, secondMetrics] = await Promise.all([metrics(first), metrics(second)]);
    expect(metricValue(firstMetrics, 'ukiyo_live_publishers{app="live"}')).toBe(1);
    expect(metricValue(secondMetrics, 'ukiyo_live_publishers{app="live"}')).toBe(0);
    expect(metricValue(secondMetrics, 'ukiyo_live_viewers{app="live"}')).toBe(1);
    expect(metricValue(firstMetrics, 'ukiyo_live_whip_requests_total{status="201"')).toBe(1);
    expect(secondMetrics).toContain(
      'ukiyo_live_hls_requests_total{kind="segment",status="200",source="peer"',
    );
    const ready = JSON.parse((await get(Number(first.env.METRICS_PORT), 'x', '/readyz')).body.toString());
    expect(ready).toMatchObject({ status: 'ok', checks: { database: { ok: true }, files: { ok: true } } });

    // Only a peer, which signs its body with the fleet's key, reports viewers.
    const report = JSON.stringify({ channelId, clients: ['forged viewer'] });
    for (const headers of [{}, { 'x-ukiyo-live-peer': 'forged' }] as Record<string, string>[]) {
      const refused = await fetch(`${liveUrl(first)}/internal/hls-viewers`, {
        method: 'POST',
        headers,
        body: report,
      });
      expect(refused.status).toBe(403);
    }
  }, 90_000);

  it('checks a viewer’s playback token where it asks, and shares the holder’s answers between tokens', async () => {
    const [first, second] = processes as [AppProcess, AppProcess];
    const { channelId, playlistUrl, call } = await publishedChannel(first, first, {
      playback_token_required: true,
    });
    // Two viewers' tokens: their expiries differ, so do they.
    const mint = async (seconds: number) =>
      (
        await call('Ukiyo_20261125.CreatePlaybackToken', {
          channel_id: channelId,
          expires_in_seconds: seconds,
        })
      ).token as string;
    const [tokenA, tokenB] = [await mint(600), await mint(900)];
    expect(tokenA).not.toBe(tokenB);
    const mediaPath = new URL(playlistUrl).pathname.replace('master', '0/index');
    const ask = (proc: AppProcess, path: string, token?: string, headers: Record<string, string> = {}) =>
      fetch(`${liveUrl(proc)}${path}${token === undefined ? '' : `?token=${token}`}`, { headers });

    for (const [proc, token, headers] of [
      [second, undefined, {}],
      [second, `${tokenA}x`, {}],
      [first, undefined, {}],
      // A viewer posing as a peer is a viewer.
      [first, undefined, { 'x-ukiyo-live-peer': 'forged' }],
    ] as const) {
      const refused = await ask(proc, mediaPath, token, headers);
      expect(refused.status).toBe(401);
      await refused.arrayBuffer();
    }
    const media = await until(
      'a media playlist through the second process',
      async () => {
        const answer = await ask(second, mediaPath, tokenA);
        const text = await answer.text();
        return answer.status === 200 && text.includes('#EXTINF') ? text : undefined;
      },
      20_000,
      200,
    );
    // The playlist names its files with the viewer's token, as players fetch them.
    const named = segmentNames(media).at(-1)!;
    const segment = named.split('?')[0]!;
    expect(named).toBe(`${segment}?token=${tokenA}`);
    // Each viewer's playlist names its own token, though both came from one kept answer.
    const forB = await (await ask(second, mediaPath, tokenB)).text();
    expect(forB).toContain(`?token=${tokenB}`);
    expect(forB).not.toContain(tokenA);

    const holderSegments = async () =>
      metricValue(
        await metrics(first),
        'ukiyo_live_hls_requests_total{kind="segment",status="200",source="local"',
      ) || 0;
    const before = await holderSegments();
    const segmentPath = mediaPath.replace('index.m3u8', segment);
    const answers = await Promise.all(
      [tokenA, tokenB].map(async (token) => {
        const answer = await ask(second, segmentPath, token);
        return { status: answer.status, body: Buffer.from(await answer.arrayBuffer()) };
      }),
    );
    expect(answers.map(({ status }) => status)).toEqual([200, 200]);
    expect(answers[0]!.body.equals(answers[1]!.body)).toBe(true);
    expect((await holderSegments()) - before).toBe(1);
  }, 90_000);

  it('views over Sora signaling through the other process, the media coming from the holder', async () => {
    const [first, second] = processes as [AppProcess, AppProcess];
    const { channelId } = await publishedChannel(first, first);
    const guarded = await publishedChannel(first, first, { playback_token_required: true });
    const webRtcViewers = async (proc: AppProcess) =>
      metricValue(await metrics(proc), 'ukiyo_live_webrtc_viewers{app="live"}');

    const soraViewerAt = (proc: AppProcess, connect: Record<string, unknown>) =>
      soraViewer(`${liveUrl(proc).replace(/^http/, 'ws')}/signaling`, connect);

    const viewer = soraViewerAt(second, { channel_id: channelId });
    try {
      await until('RTP through the other process', async () => (viewer.packets() >= 30 ? true : undefined));
      expect(await webRtcViewers(first)).toBe(1);
      expect(await webRtcViewers(second)).toBe(0);
    } finally {
      await viewer.leave();
    }
    await until('the viewer gone at the holder', async () =>
      (await webRtcViewers(first)) === 0 ? true : undefined,
    );

    // The holder's refusal reaches the client as the holder closed with it.
    const refused = soraViewerAt(second, { channel_id: guarded.channelId });
    await expect(refused.closed).resolves.toEqual({
      code: 4401,
      reason: 'a valid playback token is required',
    });
    await refused.leave();
  }, 90_000);

  it('plays to the Sora JavaScript SDK in Chromium through the other process', async () => {
    const [first, second] = processes as [AppProcess, AppProcess];
    const { channelId } = await publishedChannel(first, first);
    const site = await servePublisherPage();
    const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
    try {
      const page = await browser.newPage();
      await page.goto(site.url);
      await page.waitForFunction(() => 'view' in globalThis);
      const view = () =>
        page.evaluate(
          ([url, channel]) =>
            (globalThis as unknown as { view(...args: unknown[]): Promise<string> }).view(url, channel, null),
          [`${liveUrl(second).replace(/^http/, 'ws')}/signaling`, channelId],
        );
      // In CI after the e2e suite, twice in a day, the holder's connection to Chromium ended
      // before the SDK connected ('viewer ended'; never alone): it connects again once, as a
      // player would.
      const viewerId = await view().catch(view);
      expect(viewerId).toMatch(/^[0-9a-f]{20}$/);
      const video = page.locator('#viewer');
      await until(
        'the video playing',
        async () =>
          (await video.evaluate((element) => (element as { currentTime: number }).currentTime)) > 1
            ? true
            : undefined,
        30_000,
        200,
      );
      expect(await video.evaluate((element) => (element as { videoWidth: number }).videoWidth)).toBe(160);
      expect(metricValue(await metrics(first), 'ukiyo_live_webrtc_viewers{app="live"}')).toBe(1);
    } finally {
      await browser.close();
      await site.close();
    }
  }, 90_000);

  it('closes a relayed client that floods signaling while the holder does not take it', async () => {
    const [first, second] = processes as [AppProcess, AppProcess];
    const { channelId } = await publishedChannel(first, first);
    // The holder stopped: its kernel takes the relay's connection, but nothing answers the
    // upgrade, so all the client sends is held at the second process.
    first.child.kill('SIGSTOP');
    try {
      const client = new WebSocket(`${liveUrl(second).replace(/^http/, 'ws')}/signaling`);
      const closed = new Promise<{ code: number; reason: string }>((resolve) =>
        client.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
      );
      await new Promise((resolve) => client.once('open', resolve));
      client.send(JSON.stringify({ type: 'connect', role: 'recvonly', channel_id: channelId }));
      // Messages of 120 KiB (within the payload limit), one every 20 ms until the relay, once
      // it started (the holder looked up in the database), holds more than 1 MiB.
      const flood = setInterval(() => client.send(Buffer.alloc(120 * 1024, 'x'), { binary: false }), 20);
      try {
        await expect(closed).resolves.toEqual({
          code: 4400,
          reason: 'signaling sent faster than it can be passed on',
        });
      } finally {
        clearInterval(flood);
        client.terminate();
      }
    } finally {
      first.child.kill('SIGCONT');
    }
  }, 90_000);

  it('answers a crowd through the other process with one request to the holder per file, and counts each viewer once', async () => {
    const [first, second] = processes as [AppProcess, AppProcess];
    const { channelId, playlistUrl } = await publishedChannel(first, first);
    const path = new URL(playlistUrl).pathname;
    // Every answer to a viewer is counted once, by the process the viewer asked.
    let delivered = 0;
    const view = async (proc: AppProcess, file: string, userAgent: string) => {
      const answer = await fetch(`${liveUrl(proc)}${path.replace('master.m3u8', file)}`, {
        headers: { 'User-Agent': userAgent },
      });
      const body = Buffer.from(await answer.arrayBuffer());
      if (answer.status === 200) delivered++;
      return { status: answer.status, body };
    };
    const media = await until(
      'a media playlist through the second process',
      async () => {
        const { status, body } = await view(second, '0/index.m3u8', 'first-viewer');
        return status === 200 && body.includes('#EXTINF') ? body.toString() : undefined;
      },
      20_000,
      200,
    );
    const holderAnswered = async (kind: 'playlist' | 'segment') =>
      metricValue(
        await metrics(first),
        `ukiyo_live_hls_requests_total{kind="${kind}",status="200",source="local"`,
      ) || 0;

    // Ten viewers ask the second process for a segment at once: the holder answers once.
    const segment = segmentNames(media).at(-1)!;
    const segmentsBefore = await holderAnswered('segment');
    const copies = await Promise.all(
      Array.from({ length: 10 }, (_, n) => view(second, `0/${segment}`, `through-second-${n}`)),
    );
    expect(copies.map(({ status }) => status)).toEqual(Array(10).fill(200));
    expect(new Set(copies.map(({ body }) => body.toString('base64'))).size).toBe(1);
    expect((await holderAnswered('segment')) - segmentsBefore).toBe(1);
    // A query the holder does not read changes nothing: the kept answer serves it.
    const busted = await view(second, `0/${segment}?cache-buster=${Date.now()}`, 'through-second-0');
    expect(busted.body.equals(copies[0]!.body)).toBe(true);
    expect((await holderAnswered('segment')) - segmentsBefore).toBe(1);

    // Their blocking reloads for the next segment cost the holder one answer too. The segment
    // after the holder's live edge now: on a loaded host the fetches above can outlast the
    // playlist's window.
    const next = newestSegment((await view(first, '0/index.m3u8', 'at-the-holder-0')).body.toString()) + 1;
    const playlistsBefore = await holderAnswered('playlist');
    const reloads = await Promise.all(
      Array.from({ length: 10 }, (_, n) =>
        view(second, `0/index.m3u8?_HLS_msn=${next}`, `through-second-${n}`),
      ),
    );
    expect(reloads.map(({ status }) => status)).toEqual(Array(10).fill(200));
    for (const { body } of reloads) expect(body.toString()).toContain(`seg${next}.m4s`);
    expect((await holderAnswered('playlist')) - playlistsBefore).toBe(1);
    // One client's waiting requests are capped here as at the holder: while eight are held, its
    // ninth is refused. They wait for the segment after the one open at the holder now, one to two
    // segments away. A round says so only if the eight were still held when the ninth was
    // answered: on a loaded host the segment can come before the held gauge is read, or before
    // the ninth arrives. Without the cap, the ninth is held with the eight and answered with them.
    const capRound = async () => {
      const afterOpen =
        newestSegment((await view(first, '0/index.m3u8', 'at-the-holder-0')).body.toString()) + 2;
      const impatient = () => view(second, `0/index.m3u8?_HLS_msn=${afterOpen}`, 'impatient');
      let answered = 0;
      const eight = Array.from({ length: 8 }, () => impatient().finally(() => answered++));
      await until(
        'eight requests held by the second process, or answered',
        async () =>
          answered > 0 ||
          metricValue(await metrics(second), 'ukiyo_live_hls_requests_held{app="live"}') === 8 ||
          undefined,
        10_000,
        50,
      );
      const ninth = answered === 0 ? await impatient() : undefined;
      const stillHeld = answered === 0;
      for (const { status } of await Promise.all(eight)) expect(status).not.toBe(429);
      return stillHeld ? ninth?.status : undefined;
    };
    let ninthStatus: number | undefined;
    for (let round = 0; round < 3 && ninthStatus === undefined; round++) ninthStatus = await capRound();
    expect(ninthStatus, 'no round saw eight requests held as the ninth was answered').toBe(429);

    // The same ten watch through the second process for eight seconds, a reload every 300 ms,
    // ten others at the holder, and one more poses as a peer there (its signature is not the
    // fleet's), so each process sees eleven viewers: the holder counts the channel's viewers at
    // once, those the second process reports with its own.
    const watch = (proc: AppProcess, userAgent: string) =>
      (async () => {
        for (const until = Date.now() + 8_000; Date.now() < until; await sleep(300))
          expect((await view(proc, '0/index.m3u8', userAgent)).status).toBe(200);
      })();
    const forged = await fetch(`${liveUrl(first)}${path.replace('master', '0/index')}`, {
      headers: { 'User-Agent': 'posing-as-a-peer', 'x-ukiyo-live-peer': 'forged' },
    });
    expect(forged.status).toBe(200);
    await forged.arrayBuffer();
    delivered++;
    await Promise.all(
      Array.from({ length: 10 }, (_, n) => [
        watch(second, `through-second-${n}`),
        watch(first, `at-the-holder-${n}`),
      ]).flat(),
    );
    const usage = () =>
      harness.deps.db
        .selectFrom('live_usage_hourly')
        .select([
          (eb) => eb.fn.sum<number>('hls_requests').as('requests'),
          (eb) => eb.fn.max('hls_max_viewers').as('viewers'),
        ])
        .where('channel_id', '=', channelId)
        .executeTakeFirstOrThrow();
    const counted = await until(
      'the usage of every answer written',
      async () => {
        const row = await usage();
        return Number(row.requests) === delivered ? row : undefined;
      },
      20_000,
      500,
    );
    expect(Number(counted.viewers)).toBeGreaterThanOrEqual(20);

    // SIGTERM to the holder's whole process group, as systemd or Ctrl-C send it, its viewer
    // processes included: they leave it to the live process, which drains the LL-HLS connections
    // handed to them. A viewer waiting for the open segment gets it, then its connection closes.
    const mediaPath = path.replace('master.m3u8', '0/index.m3u8');
    const watching = await RawConnection.open(liveUrl(first), 'watching-through-the-stop');
    const listed = await watching.get(mediaPath);
    const open = newestSegment(listed.body.toString()) + 1;
    const held = watching.get(`${mediaPath}?_HLS_msn=${open}`);
    await sleep(50);
    const exited = first.stopGroup('SIGTERM');
    const answer = await held;
    expect(answer.status).toBe(200);
    expect(answer.body.toString(), first.output.slice(-40).join('')).toContain(`seg${open}.m4s`);
    await watching.ended;
    // It ends the publisher's session and exits cleanly. The signal did not reach the session's
    // ffmpeg (a process group of its own), which ends as the session closes its input.
    expect(await exited).toBe(0);
    expect(first.output.join('')).not.toContain('ffmpeg exited during the session');
  }, 90_000);
});
