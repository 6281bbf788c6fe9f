import { SAMPLES_SERVICE_CODE } from '@ukiyo/contract';
import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import { USAGE_COUNTERS, type UsageCounter } from '../db/tables.ts';
import { AppError } from '../http/app-error.ts';
import {
  costOf,
  currentMonthUtc,
  dayKey,
  isUtcMidnight,
  monthPeriodUtc,
  planPrice,
  planPrices,
  projectToEnd,
  statisticsPeriod,
  toGiB,
} from '../services/billing.ts';
import { liveUsageReport } from '../services/live-usage.ts';
import { organizationOf, type Handlers } from './context.ts';

/** usage_hourly's and usage_daily's counters, summed over whatever a query groups. */
type Counts = Record<UsageCounter, number>;

function summed(table: 'usage_hourly' | 'usage_daily') {
  return USAGE_COUNTERS.map((column) =>
    sql<number>`sum(${sql.ref(`${table}.${column}`)})::bigint`.as(column),
  );
}

function zero(): Counts {
  return Object.fromEntries(USAGE_COUNTERS.map((column) => [column, 0])) as Counts;
}

function add(target: Counts, row: Counts): void {
  for (const column of USAGE_COUNTERS) target[column] += Number(row[column]);
}

/** Counts as statistics.origins presents them. */
function figures(counts: Counts) {
  const hits = counts.cache_memory + counts.cache_disk + counts.cache_shared + counts.cache_stale;
  const answered = hits + counts.cache_miss + counts.cache_coalesced;
  return {
    requests: counts.requests,
    outboundBytes: counts.outbound_bytes,
    status: {
      ok: counts.status_2xx,
      notModified: counts.status_304,
      clientError: counts.status_4xx,
      serverError: counts.status_5xx,
    },
    cache: {
      memory: counts.cache_memory,
      disk: counts.cache_disk,
      shared: counts.cache_shared,
      miss: counts.cache_miss,
      coalesced: counts.cache_coalesced,
      stale: counts.cache_stale,
    },
    hitRatio: answered === 0 ? null : hits / answered,
    originBytes: counts.origin_bytes,
    sourceBytes: counts.source_bytes,
    convertedBytes: counts.converted_bytes,
    savedBytes: counts.source_bytes - counts.converted_bytes,
  };
}

type UsageRow = Counts & { origin_id: number; day: string };

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
      .select(['origin_id', sql<string>`to_char(day, 'YYYY-MM-DD')`.as('day'), ...summed('usage_daily')])
      .where('organization_id', '=', organizationId)
      .where('day', '>=', dayKey(from))
      .where('day', '<', dayKey(to))
      .groupBy(['origin_id', 'day'])
      .execute();
  }
  return db
    .selectFrom('usage_hourly')
    .select([
      'origin_id',
      sql<string>`to_char(hour at time zone 'UTC', 'YYYY-MM-DD')`.as('day'),
      ...summed('usage_hourly'),
    ])
    .where('organization_id', '=', organizationId)
    .where('hour', '>=', from)
    .where('hour', '<', to)
    .groupBy(['origin_id', sql`2`])
    .execute();
}

const MAX_HOURLY_DAYS = 31;

/** Every origin's (or one's) figures per UTC hour within [from, to). */
async function usageByHour(db: Db, organizationId: number, from: Date, to: Date, originId?: number) {
  if (to.getTime() - from.getTime() > MAX_HOURLY_DAYS * 86_400_000)
    throw new AppError('validation error', { invalids: { to: ['validation.invalid'] } });
  let query = db
    .selectFrom('usage_hourly')
    .select([
      sql<string>`to_char(hour at time zone 'UTC', 'YYYY-MM-DD"T"HH24:00:00"Z"')`.as('hour'),
      ...summed('usage_hourly'),
    ])
    .where('organization_id', '=', organizationId)
    .where('hour', '>=', from)
    .where('hour', '<', to);
  if (originId !== undefined) query = query.where('origin_id', '=', originId);
  const rows = await query
    .groupBy(sql`1`)
    .orderBy(sql`1`)
    .execute();
  return rows.map(({ hour, ...counts }) => ({ hour, ...figures(toCounts(counts)) }));
}

function toCounts(row: Counts): Counts {
  const counts = zero();
  add(counts, row);
  return counts;
}

const TOP_SHOWN = 20;
type Dimension = 'path' | 'transform' | 'format' | 'error';

/**
 * The most requested keys of each dimension over the days of [from, to), and the paths with
 * the most bytes, from the edge's capped daily top table (approximate past its caps).
 */
async function topOf(db: Db, organizationId: number, from: Date, to: Date, originId?: number) {
  let grouped = db
    .selectFrom('usage_top_daily')
    .select([
      'dimension',
      'key',
      sql<number>`sum(requests)::bigint`.as('requests'),
      sql<number>`sum(bytes)::bigint`.as('bytes'),
      sql<number>`sum(saved_bytes)::bigint`.as('saved_bytes'),
      sql<number>`row_number() over (partition by dimension order by sum(requests) desc, key)`.as(
        'by_requests',
      ),
      sql<number>`row_number() over (partition by dimension order by sum(bytes) desc, key)`.as('by_bytes'),
    ])
    .where('organization_id', '=', organizationId)
    .where('day', '>=', dayKey(from))
    // A period ending inside a day includes that day's counts.
    .where('day', '<=', dayKey(new Date(to.getTime() - 1)));
  if (originId !== undefined) grouped = grouped.where('origin_id', '=', originId);
  const rows = await db
    .selectFrom(grouped.groupBy(['dimension', 'key']).as('ranked'))
    .selectAll()
    .where((eb) => eb.or([eb('by_requests', '<=', TOP_SHOWN), eb('by_bytes', '<=', TOP_SHOWN)]))
    .execute();
  const entry = (row: (typeof rows)[number]) => ({
    key: row.key,
    requests: Number(row.requests),
    bytes: Number(row.bytes),
    savedBytes: Number(row.saved_bytes),
  });
  const ranked = (dimension: Dimension, by: 'by_requests' | 'by_bytes') =>
    rows
      .filter((row) => row.dimension === dimension && Number(row[by]) <= TOP_SHOWN)
      .sort((a, b) => Number(a[by]) - Number(b[by]))
      .map(entry);
  return {
    paths: ranked('path', 'by_requests'),
    pathsByBytes: ranked('path', 'by_bytes'),
    transforms: ranked('transform', 'by_requests'),
    formats: ranked('format', 'by_requests'),
    errors: ranked('error', 'by_requests'),
  };
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
      'organizations.plan',
      'sakura_accounts.member_code',
      sql<number>`coalesce(usage.requests, 0) + coalesce(hls.requests, 0)`.as('requests'),
      sql<number>`coalesce(usage.outbound_bytes, 0) + coalesce(hls.outbound_bytes, 0)`.as('outbound_bytes'),
    ])
    .orderBy('organizations.id')
    .execute();
}

interface DayDelivery {
  day: string;
  requests: number;
  outboundBytes: number;
}

/**
 * An organization's delivery per UTC day in [from, to): its image origins' and its HLS (an
 * organization has one or the other), with the image analytics counters and the live report.
 */
async function deliveryByDay(db: Db, organizationId: number, from: Date, to: Date) {
  const [images, live] = await Promise.all([
    db
      .selectFrom('usage_daily')
      .select([sql<string>`to_char(day, 'YYYY-MM-DD')`.as('day'), ...summed('usage_daily')])
      .where('organization_id', '=', organizationId)
      .where('day', '>=', dayKey(from))
      .where('day', '<', dayKey(to))
      .groupBy('day')
      .execute(),
    liveUsageReport(db, organizationId, from, to),
  ]);
  const counts = zero();
  const days = new Map<string, DayDelivery>();
  const delivered = (day: string, requests: number, outboundBytes: number) => {
    const known = days.get(day) ?? { day, requests: 0, outboundBytes: 0 };
    known.requests += requests;
    known.outboundBytes += outboundBytes;
    days.set(day, known);
  };
  for (const row of images) {
    add(counts, row);
    delivered(row.day, Number(row.requests), Number(row.outbound_bytes));
  }
  for (const row of live.daily) delivered(row.day, row.hlsRequests, row.hlsBytesOut);
  return { daily: [...days.values()].sort((a, b) => a.day.localeCompare(b.day)), images: counts, live };
}

function totalOf(days: DayDelivery[]) {
  return days.reduce(
    (total, day) => ({
      requests: total.requests + day.requests,
      outboundBytes: total.outboundBytes + day.outboundBytes,
    }),
    { requests: 0, outboundBytes: 0 },
  );
}

export const statisticsHandlers: Handlers = {
  'statistics.origins': async (input, context) => {
    const { from, to } = statisticsPeriod(input);
    const { db } = context.deps;
    const organization = organizationOf(context);
    const { originID } = input;
    const [origins, rows, top, hourly] = await Promise.all([
      db
        .selectFrom('origins')
        .select(['id', 'name'])
        .where('organization_id', '=', organization.id)
        .orderBy('id')
        .execute(),
      usageByOriginAndDay(db, organization.id, from, to),
      topOf(db, organization.id, from, to, originID),
      input.granularity === 'hour' ? usageByHour(db, organization.id, from, to, originID) : undefined,
    ]);
    const perOrigin = new Map(
      origins.map((origin) => [
        origin.id,
        { originID: origin.id, name: origin.name, counts: zero(), days: new Map<string, Counts>() },
      ]),
    );
    const total = zero();
    const daily = new Map<string, Counts>();
    for (const row of rows) {
      const origin = perOrigin.get(row.origin_id);
      if (!origin) continue;
      add(origin.counts, row);
      origin.days.set(row.day, toCounts(row));
      add(total, row);
      const day = daily.get(row.day) ?? zero();
      add(day, row);
      daily.set(row.day, day);
    }
    const series = (days: Map<string, Counts>) =>
      [...days].sort(([a], [b]) => a.localeCompare(b)).map(([day, counts]) => ({ day, ...figures(counts) }));
    return {
      origins: [...perOrigin.values()].map(({ counts, days, ...origin }) => ({
        ...origin,
        stats: figures(counts),
        daily: series(days),
      })),
      total: figures(total),
      daily: series(daily),
      ...(hourly ? { hourly } : {}),
      top,
    };
  },

  'statistics.dashboard': async (_input, context) => {
    const { db } = context.deps;
    const organization = organizationOf(context);
    const now = new Date();
    const period = currentMonthUtc(now);
    const before = monthPeriodUtc(now.getUTCFullYear(), now.getUTCMonth());
    const [month, lastMonth, price] = await Promise.all([
      deliveryByDay(db, organization.id, period.from, period.to),
      deliveryByDay(db, organization.id, before.from, before.to),
      planPrice(db, organization.plan),
    ]);
    const usage = totalOf(month.daily);
    const projected = projectToEnd(usage, period, now);
    const { hitRatio, savedBytes } = figures(month.images);
    return {
      billingPeriod: { from: period.from.toISOString(), to: period.to.toISOString() },
      ...usage,
      liveConnectedSeconds: month.live.total.connectedSeconds,
      webrtcCumulative: month.live.total.connections,
      maxConcurrentConnections: month.live.total.maxConcurrent,
      daily: month.daily,
      lastMonth: totalOf(lastMonth.daily),
      projected,
      hitRatio,
      savedBytes,
      price: price ?? null,
      cost: price ? { soFar: costOf(price, usage), projected: costOf(price, projected) } : null,
    };
  },

  'plan.prices': async (_input, context) => ({ prices: await planPrices(context.deps.db) }),

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
    const { db } = context.deps;
    const rows = await usageByOrganization(db, year, month);
    // Charged by each organization's current plan: plans are not kept per month.
    const prices = new Map((await planPrices(db)).map((price) => [price.plan, price]));
    return {
      // The guest preview's organization is the product's own: its traffic is billed to no one.
      rows: rows
        .filter((row) => row.service_code !== SAMPLES_SERVICE_CODE)
        .map((row) => {
          const usage = { requests: Number(row.requests), outboundBytes: Number(row.outbound_bytes) };
          const price = prices.get(row.plan);
          return {
            memberId: row.member_code,
            serviceCd: row.service_code,
            name: row.name,
            transferGiB: toGiB(usage.outboundBytes),
            requests: usage.requests,
            amount: price ? costOf(price, usage) : null,
            currency: price?.currency ?? null,
          };
        }),
    };
  },
};
