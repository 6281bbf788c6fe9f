import { ALL_MEMBER_PERMISSIONS } from '@ukiyo/contract';
import { pino } from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  type Client,
  createTenant,
  createTestUser,
  loggedIn,
  loggedInAdministrator,
  testServer,
  type TestServer,
} from '@ukiyo/server/testing';
import { LiveUsage } from '../src/usage.ts';

const rendition = { durationSeconds: 1, video: { width: 640, height: 360, fps: 30, bps: 800_000 } };
const thisHour = () => {
  const from = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000);
  return { from: from.toISOString(), to: new Date(from.getTime() + 7_200_000).toISOString() };
};

// The live process's usage writer, as it runs in apps/live, feeding the console's figures.
describe('live usage in the console', () => {
  let server: TestServer;
  let owner: Client;
  let outsider: Client;
  let organizationId: number;

  async function member(): Promise<{ client: Client; organizationId: number }> {
    const tenant = await createTenant(server.deps, { isLive: true });
    const user = await createTestUser(server.deps, {
      accountId: tenant.accountId,
      permission: ALL_MEMBER_PERMISSIONS,
    });
    return { client: await loggedIn(server.baseUrl, user.email), organizationId: tenant.organizationIds[0]! };
  }

  beforeAll(async () => {
    server = await testServer();
    ({ client: owner, organizationId } = await member());
    ({ client: outsider } = await member());
  });

  it('counts connections, the peak of simultaneous ones, publishing time and HLS delivery and viewers per channel', async () => {
    const channelIds: string[] = [];
    for (let i = 0; i < 2; i++) {
      const added = await owner.call('channel.add', { hls: [rendition] });
      expect(added.status, JSON.stringify(added.body)).toBe(200);
      channelIds.push((added.body.channel as { id: string }).id);
    }
    const [first, second] = channelIds as [string, string];
    const usage = new LiveUsage(server.deps.db, pino({ level: 'silent' }));
    usage.connected('c1', first, organizationId, 'publisher');
    usage.connected('c2', second, organizationId, 'publisher');
    usage.bytesIn(first, organizationId, 50_000);
    // Two viewers of the first channel (one fetching twice), one of the second.
    for (const client of ['a', 'b', 'a']) usage.hls(first, organizationId, 1_000, client);
    usage.hls(second, organizationId, 400, 'a');
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    usage.disconnected('c1');
    usage.disconnected('c2');
    usage.connected('c3', first, organizationId, 'viewer');
    usage.disconnected('c3');
    await usage.stop();

    const dashboard = (await owner.call('statistics.dashboard')).body;
    // HLS delivery is the live organization's requests and outbound traffic.
    expect(dashboard).toMatchObject({
      requests: 4,
      outboundBytes: 3_400,
      webrtcCumulative: 3,
      maxConcurrentConnections: 2,
    });
    expect(dashboard.liveConnectedSeconds).toBeGreaterThanOrEqual(2);

    const statistics = await owner.call('channel.statistics', thisHour());
    expect(statistics.status).toBe(200);
    const channels = statistics.body.channels as { channelId: string; daily: unknown[] }[];
    const byId = new Map(channels.map((channel) => [channel.channelId, channel]));
    expect(channels).toHaveLength(2);
    expect(byId.get(first)).toMatchObject({
      connections: 2,
      maxConcurrent: 1,
      bytesIn: 50_000,
      hlsRequests: 3,
      hlsBytesOut: 3_000,
      hlsMaxViewers: 2,
    });
    expect(byId.get(second)).toMatchObject({
      connections: 1,
      hlsRequests: 1,
      hlsBytesOut: 400,
      hlsMaxViewers: 1,
    });
    // The publishers' second or more each; the viewer's instant adds connected time, not publishing.
    const published = byId.get(first) as unknown as { publishingSeconds: number; connectedSeconds: number };
    expect(published.publishingSeconds).toBeGreaterThanOrEqual(1);
    expect(published.connectedSeconds).toBeGreaterThanOrEqual(published.publishingSeconds);
    for (const channel of channels) expect(channel.daily.length).toBeGreaterThanOrEqual(1);
    expect(statistics.body.total).toMatchObject({
      connections: 3,
      maxConcurrent: 2,
      hlsRequests: 4,
      hlsMaxViewers: 3,
    });

    // Administrators' statistics and invoices count it as the organization's delivery.
    const admin = await loggedInAdministrator(server);
    const now = new Date();
    const month = { year: now.getUTCFullYear(), month: now.getUTCMonth() + 1 };
    const organizations = (await admin.call('admin.statistics', month)).body.organizations as {
      organizationID: number;
    }[];
    expect(organizations.find((row) => row.organizationID === organizationId)).toMatchObject({
      requests: 4,
      outboundBytes: 3_400,
    });
  });

  it('shows another organization none of it', async () => {
    expect(await outsider.call('statistics.dashboard')).toMatchObject({
      body: { webrtcCumulative: 0, maxConcurrentConnections: 0, liveConnectedSeconds: 0 },
    });
    const statistics = await outsider.call('channel.statistics', thisHour());
    expect(statistics.body).toMatchObject({ channels: [], daily: [], total: { hlsRequests: 0 } });
  });
});
