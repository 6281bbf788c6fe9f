import { SAMPLES_SERVICE_CODE } from '@ukiyo/contract';
import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import { AppError } from '../http/app-error.ts';
import {
  currentMonthUtc,
  dayKey,
  isUtcMidnight,
  monthPeriodUtc,
  statisticsPeriod,
  toGiB,
} from '../services/billing.ts';
import { liveUsageReport } from '../services/live-usage.ts';
import { organizationOf, type Handlers } from './context.ts';

interface UsageRow {
  origin_id: number;
  day: string;
  requests: number;
  outbound_bytes: number;
}

/**
 * Usage of one organization's origins per UTC day within [from, to): from the daily table
 * when the range falls on day boundaries (the console always asks for whole days), else summed
 * from the hourly one.
 */
async function usageByOriginAndDay(
  db: Db,
  organizationId: number,
  from: Date,
  to: Date,
): Promise<UsageRow[]> {
  if (isUtcMidnight(from) && isUtcMidnight(to)) {
    return db
      .selectFrom('usage_daily')
      .select(['origin_id', sql<string>`to_char(day, 'YYYY-MM-DD')`.as('day'), 'requests', 'outbound_bytes'])
      .where('organization_id', '=', organizationId)
      .where('day', '>=', dayKey(from))
      .where('day', '<', dayKey(to))
      .execute();
  }
  return db
    .selectFrom('usage_hourly')
    .select([
      'origin_id',
      sql<string>`to_char(hour at time zone 'UTC', 'YYYY-MM-DD')`.as('day'),
      sql<number>`sum(requests)::bigint`.as('requests'),
      sql<number>`sum(outbound_bytes)::bigint`.as('outbound_bytes'),
    ])
    .where('organization_id', '=', organizationId)
    .where('hour', '>=', from)
    .where('hour', '<', to)
    .groupBy(['origin_id', sql`2`])
    .execute();
}

function add(
  target: { requests: number; outboundBytes: number },
  row: { requests: number; outbound_bytes: number },
) {
  target.requests += Number(row.requests);
  target.outboundBytes += Number(row.outbound_bytes);
}

/**
 * Every organization's usage in a month, for the administrators' statistics and invoices:
 * requests and outbound traffic of its image origins and of its HLS delivery.
 */
async function usageByOrganization(db: Db, year: number, month: number) {
  const { from, to } = monthPeriodUtc(year, month);
  return db
    .selectFrom('organizations')
    .innerJoin('sakura_accounts', 'sakura_accounts.id', 'organizations.sakura_account_id')
    .leftJoin(
      (eb) =>
        eb
          .selectFrom('usage_daily')
          .select([
            'organization_id',
            sql<number>`sum(requests)::bigint`.as('requests'),
            sql<number>`sum(outbound_bytes)::bigint`.as('outbound_bytes'),
          ])
          .where('day', '>=', dayKey(from))
          .where('day', '<', dayKey(to))
          .groupBy('organization_id')
          .as('usage'),
      (join) => join.onRef('usage.organization_id', '=', 'organizations.id'),
    )
    .leftJoin(
      (eb) =>
        eb
          .selectFrom('live_usage_hourly')
          .select([
            'organization_id',
            sql<number>`sum(hls_requests)::bigint`.as('requests'),
            sql<number>`sum(hls_bytes_out)::bigint`.as('outbound_bytes'),
          ])
          .where('hour', '>=', from)
          .where('hour', '<', to)
          .groupBy('organization_id')
          .as('hls'),
      (join) => join.onRef('hls.organization_id', '=', 'organizations.id'),
    )
    .select([
      'organizations.id',
      'organizations.name',
      'organizations.service_code',
      'sakura_accounts.member_code',
      sql<number>`coalesce(usage.requests, 0) + coalesce(hls.requests, 0)`.as('requests'),
      sql<number>`coalesce(usage.outbound_bytes, 0) + coalesce(hls.outbound_bytes, 0)`.as('outbound_bytes'),
    ])
    .orderBy('organizations.id')
    .execute();
}

export const statisticsHandlers: Handlers = {
  'statistics.origins': async (input, context) => {
    const { from, to } = statisticsPeriod(input);
    const { db } = context.deps;
    const organization = organizationOf(context);
    const [origins, rows] = await Promise.all([
      db
        .selectFrom('origins')
        .select(['id', 'name'])
        .where('organization_id', '=', organization.id)
        .orderBy('id')
        .execute(),
      usageByOriginAndDay(db, organization.id, from, to),
    ]);
    const perOrigin = new Map(
      origins.map((origin) => [
        origin.id,
        {
          originID: origin.id,
          name: origin.name,
          stats: { requests: 0, outboundBytes: 0 },
          days: new Map<string, UsageRow>(),
        },
      ]),
    );
    const total = { requests: 0, outboundBytes: 0 };
    const daily = new Map<string, { day: string; requests: number; outboundBytes: number }>();
    for (const row of rows) {
      const origin = perOrigin.get(row.origin_id);
      if (!origin) continue;
      add(origin.stats, row);
      origin.days.set(row.day, row);
      add(total, row);
      const day = daily.get(row.day) ?? { day: row.day, requests: 0, outboundBytes: 0 };
      add(day, row);
      daily.set(row.day, day);
    }
    const byDay = (a: { day: string }, b: { day: string }) => a.day.localeCompare(b.day);
    return {
      origins: [...perOrigin.values()].map(({ days, ...origin }) => ({
        ...origin,
        daily: [...days.values()]
          .map((row) => ({
            day: row.day,
            requests: Number(row.requests),
            outboundBytes: Number(row.outbound_bytes),
          }))
          .sort(byDay),
      })),
      total,
      daily: [...daily.values()].sort(byDay),
    };
  },

  'statistics.dashboard': async (_input, context) => {
    const { db } = context.deps;
    const organization = organizationOf(context);
    const { from, to } = currentMonthUtc();
    const [images, live] = await Promise.all([
      db
        .selectFrom('usage_daily')
        .select([
          sql<number>`coalesce(sum(requests), 0)::bigint`.as('requests'),
          sql<number>`coalesce(sum(outbound_bytes), 0)::bigint`.as('outbound_bytes'),
        ])
        .where('organization_id', '=', organization.id)
        .where('day', '>=', dayKey(from))
        .where('day', '<', dayKey(to))
        .executeTakeFirstOrThrow(),
      liveUsageReport(db, organization.id, from, to),
    ]);
    return {
      billingPeriod: { from: from.toISOString(), to: to.toISOString() },
      // Delivery of either kind: image origins' and HLS (an organization has one or the other).
      requests: Number(images.requests) + live.total.hlsRequests,
      outboundBytes: Number(images.outbound_bytes) + live.total.hlsBytesOut,
      liveConnectedSeconds: live.total.connectedSeconds,
      webrtcCumulative: live.total.connections,
      maxConcurrentConnections: live.total.maxConcurrent,
    };
  },

  'admin.statistics': async ({ year, month }, context) => {
    const rows = await usageByOrganization(context.deps.db, year, month);
    return {
      organizations: rows.map((row) => ({
        organizationID: row.id,
        name: row.name,
        memberCode: row.member_code,
        serviceCode: row.service_code,
        requests: Number(row.requests),
        outboundBytes: Number(row.outbound_bytes),
      })),
    };
  },

  'admin.invoices': async ({ year, month }, context) => {
    const { from } = monthPeriodUtc(year, month);
    if (from > new Date())
      throw new AppError('validation error', { invalids: { month: ['validation.invalid'] } });
    const rows = await usageByOrganization(context.deps.db, year, month);
    return {
      // The guest preview's organization is the product's own: its traffic is billed to no one.
      rows: rows
        .filter((row) => row.service_code !== SAMPLES_SERVICE_CODE)
        .map((row) => ({
          memberId: row.member_code,
          serviceCd: row.service_code,
          name: row.name,
          transferGiB: toGiB(Number(row.outbound_bytes)),
        })),
    };
  },
};
