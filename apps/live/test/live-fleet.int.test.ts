import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  AppProcess,
  createTenant,
  freePort,
  get,
  processEnv,
  type TestServer,
  testServer,
  until,
} from '@ukiyo/server/testing';
import { apiToken, segmentNames } from './helpers.ts';
import { publish, type Publisher } from './publisher.ts';

// `npm run start:live` twice on one PostgreSQL: a publisher on one process, a viewer on the
// other, as behind a load balancer. Needs a PostgreSQL server (DATABASE_URL, as CI's second
// integration run sets): embedded PGlite is single-process.
const databaseUrl = inject('testDatabaseUrl');
const LIVE = 'apps/live/src/main.ts';

describe.skipIf(!databaseUrl)('live fleet: two live processes on PostgreSQL', () => {
  let harness: TestServer;
  let processes: AppProcess[] = [];
  let publisher: Publisher | undefined;

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
          }),
        ).start();
      }),
    );
    await Promise.all(processes.map((proc) => proc.ready()));
  }, 120_000);

  afterAll(async () => {
    await publisher?.stop(false);
    await Promise.all(processes.map((proc) => proc.stop('SIGKILL')));
  });

  it('publishes on one process and plays through the other, each reporting its part', async () => {
    const [first, second] = processes as [AppProcess, AppProcess];
    const tenant = await createTenant(harness.deps, { isLive: true });
    const token = await apiToken(harness, tenant.organizationIds[0]!);
    const call = async (proc: AppProcess, target: string, body: unknown) => {
      const response = await fetch(`${liveUrl(proc)}/`, {
        method: 'POST',
        headers: { 'X-Sora-Target': target, Authorization: `Bearer ${token}` },
        body: JSON.stringify(body),
      });
      return (await response.json()) as Record<string, unknown>;
    };
    // Created through one process, published to through the other.
    const created = await call(second, 'ImageFlux_20200316.CreateMultistreamChannelWithHLS', {
      hls: [{ durationSeconds: 1, video: { width: 160, height: 90, fps: 15, bps: 100_000 } }],
    });
    const channelId = created.channel_id as string;
    publisher = await publish({
      whipUrl: `${liveUrl(first)}/whip/${channelId}`,
      token,
      codec: 'vp8',
      width: 160,
      height: 90,
      fps: 15,
    });
    expect(publisher.status).toBe(201);
    const playlistUrl = await until(
      'the playlist URL',
      async () => {
        const listed = await call(second, 'ImageFlux_20200207.ListPlaylistURLs', { channel_id: channelId });
        return (listed.hls as { playlist_url: string }[])[0]?.playlist_url;
      },
      20_000,
      200,
    );
    expect(playlistUrl).toMatch(
      new RegExp(`^https://live\\.example\\.com/hls/${channelId}/[0-9a-f]+/master\\.m3u8$`),
    );
    const path = new URL(playlistUrl).pathname;
    const media = await until(
      'a segment through the second process',
      async () => {
        const answer = await fetch(`${liveUrl(second)}${path.replace('master', '0/index')}`);
        const text = await answer.text();
        return answer.status === 200 && text.includes('#EXTINF') ? text : undefined;
      },
      20_000,
      200,
    );
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

    // SIGTERM ends the publisher's session and exits cleanly.
    expect(await first.stop('SIGTERM')).toBe(0);
  }, 90_000);
});
