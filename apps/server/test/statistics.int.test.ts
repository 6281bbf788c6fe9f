import { request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ALL_MEMBER_PERMISSIONS, OriginKind, SAMPLES_SERVICE_CODE } from '@ukiyo/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Edge } from '@ukiyo/edge';
import {
  type Client,
  createTenant,
  createTestUser,
  loggedIn,
  loggedInAdministrator,
  startImageServer,
  startTestEdge,
  testServer,
  type TestServer,
} from './harness.ts';

// Usage comes from real requests to a real edge, flushed by its metering into the database.
let server: TestServer;
let edge: Edge;
let imageServer: Server;
let client: Client;
let admin: Client;
let memberCode: string;
let organizationId: number;

function fetchFromEdge(host: string, path: string): Promise<number> {
  const { port } = edge.server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { host } }, (res) => {
      let bytes = 0;
      res.on('data', (chunk: Buffer) => (bytes += chunk.length));
      res.on('end', () =>
        res.statusCode === 200 ? resolve(bytes) : reject(new Error(`edge answered ${res.statusCode}`)),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

beforeAll(async () => {
  server = await testServer();
  imageServer = await startImageServer({ width: 800, height: 600 }, '#3366aa');
  edge = await startTestEdge(server);
  await new Promise<void>((resolve) => edge.server.listen(0, '127.0.0.1', resolve));

  const tenant = await createTenant(server.deps);
  memberCode = tenant.memberCode;
  organizationId = tenant.organizationIds[0]!;
  const user = await createTestUser(server.deps, {
    accountId: tenant.accountId,
    permission: ALL_MEMBER_PERMISSIONS,
  });
  client = await loggedIn(server.baseUrl, user.email);
  admin = await loggedInAdministrator(server);
});

afterAll(async () => {
  await edge.close();
  await new Promise((resolve) => imageServer.close(resolve));
});

describe('usage from the edge', () => {
  it('appears in statistics, the dashboard, admin statistics and invoices with the right totals', async () => {
    const port = (imageServer.address() as AddressInfo).port;
    const names: string[] = [];
    for (let i = 0; i < 2; i++) {
      const added = await client.call('origin.add', {
        origin: {
          kind: OriginKind.http,
          config: { scheme: 'http', host: `127.0.0.1:${port}`, pathPrefix: '', rewriteHost: '' },
        },
      });
      expect(added.status, JSON.stringify(added.body)).toBe(200);
      names.push((added.body.origin as { name: string }).name);
    }
    await edge.refreshOrigins();

    const served = [0, 0];
    for (let i = 0; i < 3; i++) served[0]! += await fetchFromEdge(names[0]!, `/w=${100 + i}/photo.jpg`);
    served[1]! += await fetchFromEdge(names[1]!, '/w=50,f=png/photo.jpg');
    await edge.flushUsage();

    const now = new Date();
    const from = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
    const to = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
    const stats = await client.call('statistics.origins', { from: from.toISOString(), to: to.toISOString() });
    expect(stats.status).toBe(200);
    const origins = stats.body.origins as {
      name: string;
      stats: { requests: number; outboundBytes: number };
    }[];
    expect(origins.map((o) => [o.name, o.stats])).toMatchObject([
      [names[0], { requests: 3, outboundBytes: served[0] }],
      [names[1], { requests: 1, outboundBytes: served[1] }],
    ]);
    expect(stats.body.total).toMatchObject({ requests: 4, outboundBytes: served[0]! + served[1]! });
    expect(stats.body.daily).toMatchObject([
      { day: now.toISOString().slice(0, 10), requests: 4, outboundBytes: served[0]! + served[1]! },
    ]);

    // The same usage summed from the hourly table when the range is not on day boundaries.
    const hourly = await client.call('statistics.origins', {
      from: new Date(now.getTime() - 3_600_000).toISOString(),
      to: new Date(now.getTime() + 3_600_000).toISOString(),
    });
    expect(hourly.body.total).toEqual(stats.body.total);

    const dashboard = await client.call('statistics.dashboard');
    expect(dashboard.body).toMatchObject({
      billingPeriod: { from: from.toISOString(), to: to.toISOString() },
      requests: 4,
      outboundBytes: served[0]! + served[1]!,
    });

    const month = { year: now.getUTCFullYear(), month: now.getUTCMonth() + 1 };
    const all = await admin.call('admin.statistics', month);
    const mine = (all.body.organizations as { organizationID: number }[]).find(
      (o) => o.organizationID === organizationId,
    );
    expect(mine).toMatchObject({ memberCode, requests: 4, outboundBytes: served[0]! + served[1]! });
    const invoices = await admin.call('admin.invoices', month);
    const rows = invoices.body.rows as { memberId: string; serviceCd: string; transferGiB: number }[];
    const row = rows.find((r) => r.memberId === memberCode);
    expect(row?.transferGiB).toBe(Math.round(((served[0]! + served[1]!) / 1024 ** 3) * 100) / 100);
    // The guest preview's own organization is in the statistics, never on an invoice.
    expect((all.body.organizations as { serviceCode: string }[]).map((o) => o.serviceCode)).toContain(
      SAMPLES_SERVICE_CODE,
    );
    expect(rows.map((r) => r.serviceCd)).not.toContain(SAMPLES_SERVICE_CODE);
  });

  it('prices the month by plan_prices: the dashboard against last month, its projection and cost, and invoices', async () => {
    const { db } = server.deps;
    const { plan } = await db
      .selectFrom('organizations')
      .select('plan')
      .where('id', '=', organizationId)
      .executeTakeFirstOrThrow();
    // An operator's price change: two requests included, then 50,000 per 10,000 more.
    await db
      .updateTable('plan_prices')
      .set({ included_requests: 2, per_10k_requests: 50_000 })
      .where('plan', '=', plan)
      .execute();
    const prices = (await client.call('plan.prices')).body.prices as Array<{
      plan: number;
      monthlyFee: number;
    }>;
    expect(prices.map((price) => price.plan)).toEqual([1, 2, 3, 4]);
    const fee = prices[plan - 1]!.monthlyFee;
    const now = new Date();
    const origin = await db
      .selectFrom('origins')
      .select('id')
      .where('organization_id', '=', organizationId)
      .executeTakeFirstOrThrow();
    const lastMonthDay = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 15))
      .toISOString()
      .slice(0, 10);
    await db
      .insertInto('usage_daily')
      .values({
        origin_id: origin.id,
        organization_id: organizationId,
        day: lastMonthDay,
        requests: 7,
        outbound_bytes: 1000,
      })
      .execute();

    const { body } = await client.call('statistics.dashboard');
    expect(body).toMatchObject({
      requests: 4,
      lastMonth: { requests: 7, outboundBytes: 1000 },
      hitRatio: 0,
      price: { plan, currency: 'JPY', includedRequests: 2, per10kRequests: 50_000 },
      cost: { soFar: fee + 10 },
    });
    const daily = body.daily as Array<{ requests: number }>;
    expect(daily.reduce((sum, day) => sum + day.requests, 0)).toBe(4);
    const projected = body.projected as { requests: number };
    expect(projected.requests).toBeGreaterThanOrEqual(4);
    expect((body.cost as { projected: number }).projected).toBe(
      fee + ((projected.requests - 2) / 10_000) * 50_000,
    );

    const invoices = await admin.call('admin.invoices', {
      year: now.getUTCFullYear(),
      month: now.getUTCMonth() + 1,
    });
    expect(
      (invoices.body.rows as Array<{ memberId: string }>).find((row) => row.memberId === memberCode),
    ).toMatchObject({
      requests: 4,
      amount: fee + 10,
      currency: 'JPY',
    });
  });

  it('refuses a range that ends before it starts and a month in the future', async () => {
    const result = await client.call('statistics.origins', {
      from: '2026-02-01T00:00:00Z',
      to: '2026-01-01T00:00:00Z',
    });
    expect(result.body).toEqual({ error: 'validation error', invalids: { to: ['validation.invalid'] } });
    expect(
      (await client.call('statistics.origins', { from: 'yesterday', to: 'today' })).body.invalids,
    ).toEqual({
      from: ['validation.invalid'],
      to: ['validation.invalid'],
    });
    expect((await admin.call('admin.invoices', { year: 2099, month: 1 })).body.error).toBe(
      'validation error',
    );
  });

  it('shows an organization only its own usage', async () => {
    const other = await createTenant(server.deps);
    const outsider = await loggedIn(
      server.baseUrl,
      (await createTestUser(server.deps, { accountId: other.accountId, permission: ALL_MEMBER_PERMISSIONS }))
        .email,
    );
    const result = await outsider.call('statistics.origins', {
      from: '2020-01-01T00:00:00Z',
      to: '2020-12-31T00:00:00Z',
    });
    expect(result.body).toMatchObject({ origins: [], total: { requests: 0, outboundBytes: 0 }, daily: [] });
    expect(result.body.top).toEqual({ paths: [], pathsByBytes: [], transforms: [], formats: [], errors: [] });
    expect((await outsider.call('statistics.dashboard')).body).toMatchObject({
      requests: 0,
      outboundBytes: 0,
    });
  });
});
