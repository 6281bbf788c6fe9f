import { sql } from 'kysely';
import { USAGE_COUNTERS, type UsageCounter } from '@ukiyo/server/runtime';
import type { Logger } from 'pino';
import type { Db } from './types.ts';

/** Where an answer came from: the edge's memory, its disk, the shared tier, a conversion. */
export type CacheResult = 'memory' | 'disk' | 'shared' | 'miss' | 'coalesced' | 'stale';

/** One answered request of an origin, as the analytics count it. */
export interface Delivery {
  status: number;
  /** Body bytes sent. */
  bytes: number;
  /** Absent for refusals. */
  cache?: CacheResult;
  /** A converted image answered whole: its original's size. */
  sourceBytes?: number;
  /** The output format (`webp`) of an image answered. */
  format?: string;
  /** The image path inside the origin and the normalised parameters, of an image answered. */
  path?: string;
  transform?: string;
  /** The edge error code of a refusal. */
  error?: string;
}

type Dimension = 'path' | 'transform' | 'format' | 'error';

/** Where each of usage_hourly's counters is in the Float64Array an hour is counted in. */
const AT = Object.fromEntries(USAGE_COUNTERS.map((field, index) => [field, index])) as Record<
  UsageCounter,
  number
>;
const CACHE_AT: Record<CacheResult, number> = {
  memory: AT.cache_memory,
  disk: AT.cache_disk,
  shared: AT.cache_shared,
  miss: AT.cache_miss,
  coalesced: AT.cache_coalesced,
  stale: AT.cache_stale,
};

function statusAt(status: number): number {
  if (status === 304) return AT.status_304;
  if (status >= 500) return AT.status_5xx;
  if (status >= 400) return AT.status_4xx;
  return status >= 200 && status < 300 ? AT.status_2xx : -1;
}

interface TopCount {
  requests: number;
  bytes: number;
  saved: number;
}
type DayTops = Record<Dimension, Map<string, TopCount>>;

/** One origin's counts since the last flush, with the hour and day last counted at hand. */
interface OriginCounts {
  organizationId: number;
  hours: Map<number, Float64Array>;
  days: Map<number, DayTops>;
  hour: number;
  hourCounts: Float64Array;
  day: number;
  dayTops: DayTops;
}

/**
 * Distinct keys counted per origin, day and dimension between two flushes: beyond them only
 * keys already seen are counted, so a flood of unique URLs costs bounded memory. Totals are
 * exact; top lists are approximate for origins with more distinct paths than this per flush.
 */
export const TOP_KEYS_PER_FLUSH = 512;
/** Rows kept per origin, day and dimension in usage_top_daily (the most requested). */
export const TOP_ROWS_KEPT = 200;

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

type Counts = Record<UsageCounter, number>;
type HourRow = Counts & { origin_id: number; organization_id: number; hour: Date };
type DayRow = Counts & { origin_id: number; organization_id: number; day: string };
interface TopRow {
  origin_id: number;
  organization_id: number;
  day: string;
  dimension: Dimension;
  key: string;
  requests: number;
  bytes: number;
  saved_bytes: number;
}

/**
 * Requests, bytes and their analytics per origin, counted in memory and added to usage_hourly,
 * usage_daily and usage_top_daily in one batch per interval (upserts that add, so several
 * edges can write the same rows). Counting is a few array and map updates on the request
 * path (bench/metering.ts); a failed write keeps its rows for the next one.
 */
export class Metering {
  private origins = new Map<number, OriginCounts>();
  private unwritten: { hours: HourRow[]; tops: TopRow[] } = { hours: [], tops: [] };
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
  ) {}

  start(intervalMs: number): void {
    this.timer = setInterval(() => void this.flush(), intervalMs);
    this.timer.unref();
  }

  record(originId: number, organizationId: number, delivery: Delivery, now = Date.now()): void {
    const origin = this.originOf(originId, organizationId);
    const counts = this.hourOf(origin, now);
    const { status, bytes, sourceBytes } = delivery;
    counts[AT.requests]! += 1;
    counts[AT.outbound_bytes]! += bytes;
    const at = statusAt(status);
    if (at >= 0) counts[at]! += 1;
    if (delivery.cache !== undefined) counts[CACHE_AT[delivery.cache]]! += 1;
    let saved = 0;
    if (sourceBytes !== undefined && status === 200) {
      counts[AT.source_bytes]! += sourceBytes;
      counts[AT.converted_bytes]! += bytes;
      saved = sourceBytes - bytes;
    }
    const tops = this.dayOf(origin, now);
    if (delivery.path !== undefined) count(tops.path, delivery.path, bytes, saved);
    if (delivery.transform !== undefined) count(tops.transform, delivery.transform, bytes, saved);
    if (delivery.format !== undefined) count(tops.format, delivery.format, bytes, saved);
    if (delivery.error !== undefined) count(tops.error, delivery.error, 0, 0);
  }

  /** Bytes fetched from an origin (a source or an overlay), once per fetch however many asked. */
  originFetched(originId: number, organizationId: number, bytes: number, now = Date.now()): void {
    this.hourOf(this.originOf(originId, organizationId), now)[AT.origin_bytes]! += bytes;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    // A write under way took only what was counted before it began: the rest goes after it.
    await this.flushing;
    await this.flush();
  }

  flush(): Promise<void> {
    this.flushing ??= this.write().finally(() => {
      this.flushing = undefined;
    });
    return this.flushing;
  }

  private originOf(originId: number, organizationId: number): OriginCounts {
    let origin = this.origins.get(originId);
    if (!origin) {
      // No hour or day at hand yet: NaN equals no time, so the first record looks them up.
      origin = {
        organizationId,
        hours: new Map(),
        days: new Map(),
        hour: NaN,
        hourCounts: NOTHING_COUNTED,
        day: NaN,
        dayTops: NO_TOPS,
      };
      this.origins.set(originId, origin);
    }
    return origin;
  }

  private hourOf(origin: OriginCounts, now: number): Float64Array {
    const hour = now - (now % HOUR_MS);
    if (hour !== origin.hour) {
      origin.hour = hour;
      origin.hourCounts = entryOf(origin.hours, hour, () => new Float64Array(USAGE_COUNTERS.length));
    }
    return origin.hourCounts;
  }

  private dayOf(origin: OriginCounts, now: number): DayTops {
    const day = now - (now % DAY_MS);
    if (day !== origin.day) {
      origin.day = day;
      origin.dayTops = entryOf(origin.days, day, emptyTops);
    }
    return origin.dayTops;
  }

  private async write(): Promise<void> {
    const counted = this.origins;
    this.origins = new Map();
    const hours = mergeRows(
      [...this.unwritten.hours, ...hourRowsOf(counted)],
      (row) => `${row.origin_id}|${row.hour.getTime()}`,
    );
    const tops = mergeRows(
      [...this.unwritten.tops, ...topRowsOf(counted)],
      (row) => `${row.origin_id}|${row.day}|${row.dimension}|${row.key}`,
    );
    this.unwritten = { hours: [], tops: [] };
    if (hours.length === 0 && tops.length === 0) return;
    try {
      await this.db.transaction().execute(async (trx) => {
        // Rows of an origin deleted since the requests were counted would break the batch.
        const originIds = [...new Set([...hours, ...tops].map((row) => row.origin_id))];
        const live = new Set(
          (await trx.selectFrom('origins').select('id').where('id', 'in', originIds).execute()).map(
            (r) => r.id,
          ),
        );
        const liveHours = hours.filter((row) => live.has(row.origin_id));
        if (liveHours.length > 0) {
          await trx
            .insertInto('usage_hourly')
            .values(liveHours)
            .onConflict((oc) => oc.columns(['origin_id', 'hour']).doUpdateSet(adding('usage_hourly')))
            .execute();
          await trx
            .insertInto('usage_daily')
            .values(dayRowsOf(liveHours))
            .onConflict((oc) => oc.columns(['origin_id', 'day']).doUpdateSet(adding('usage_daily')))
            .execute();
        }
        const liveTops = tops.filter((row) => live.has(row.origin_id));
        if (liveTops.length > 0) await writeTops(trx, liveTops);
      });
    } catch (error) {
      this.log.warn({ err: error }, 'usage flush failed; retrying with the next batch');
      this.unwritten = { hours, tops };
    }
  }
}

function entryOf<V>(map: Map<number, V>, key: number, make: () => V): V {
  let value = map.get(key);
  if (value === undefined) {
    value = make();
    map.set(key, value);
  }
  return value;
}

function emptyTops(): DayTops {
  return { path: new Map(), transform: new Map(), format: new Map(), error: new Map() };
}
const NOTHING_COUNTED = new Float64Array(0);
const NO_TOPS = emptyTops();

function count(counts: Map<string, TopCount>, key: string, bytes: number, saved: number): void {
  const known = counts.get(key);
  if (known) {
    known.requests++;
    known.bytes += bytes;
    known.saved += saved;
  } else if (counts.size < TOP_KEYS_PER_FLUSH) {
    counts.set(key, { requests: 1, bytes, saved });
  }
}

function countsOf(values: Float64Array): Counts {
  return Object.fromEntries(USAGE_COUNTERS.map((field, index) => [field, values[index]!])) as Counts;
}

function hourRowsOf(counted: Map<number, OriginCounts>): HourRow[] {
  return [...counted].flatMap(([originId, { organizationId, hours }]) =>
    [...hours].map(([hour, values]) => ({
      origin_id: originId,
      organization_id: organizationId,
      hour: new Date(hour),
      ...countsOf(values),
    })),
  );
}

function topRowsOf(counted: Map<number, OriginCounts>): TopRow[] {
  return [...counted].flatMap(([originId, { organizationId, days }]) =>
    [...days].flatMap(([dayMs, tops]) => {
      const day = new Date(dayMs).toISOString().slice(0, 10);
      return (Object.keys(tops) as Dimension[]).flatMap((dimension) =>
        [...tops[dimension]].map(([key, top]) => ({
          origin_id: originId,
          organization_id: organizationId,
          day,
          dimension,
          key,
          requests: top.requests,
          bytes: top.bytes,
          saved_bytes: top.saved,
        })),
      );
    }),
  );
}

/** The hourly rows summed per origin and UTC day. */
function dayRowsOf(hours: HourRow[]): DayRow[] {
  return mergeRows(
    hours.map(({ hour, ...row }) => ({ ...row, day: hour.toISOString().slice(0, 10) })),
    (row) => `${row.origin_id}|${row.day}`,
  );
}

/**
 * Rows with the same key summed into one (an upsert may not touch a row twice): the numeric
 * counters add, the rest is the key's.
 */
function mergeRows<Row extends object>(rows: Row[], keyOf: (row: Row) => string): Row[] {
  const merged = new Map<string, Row>();
  for (const row of rows) {
    const key = keyOf(row);
    const known = merged.get(key) as Record<string, unknown> | undefined;
    if (!known) {
      merged.set(key, { ...row });
      continue;
    }
    for (const [field, value] of Object.entries(row)) {
      if (typeof value === 'number' && !field.endsWith('_id'))
        known[field] = (known[field] as number) + value;
    }
  }
  return [...merged.values()];
}

/** Upsert assignments that add the new row's counts to the stored ones. */
function adding(table: 'usage_hourly' | 'usage_daily') {
  return Object.fromEntries(
    USAGE_COUNTERS.map((field) => [
      field,
      sql`${sql.ref(`${table}.${field}`)} + ${sql.ref(`excluded.${field}`)}`,
    ]),
  );
}

/**
 * Adds a batch's top counts, then trims each origin, day and dimension it touched to the
 * TOP_ROWS_KEPT most requested: the table stays bounded whatever the URLs.
 */
async function writeTops(trx: Db, rows: TopRow[]): Promise<void> {
  await trx
    .insertInto('usage_top_daily')
    .values(rows)
    .onConflict((oc) =>
      oc.columns(['origin_id', 'day', 'dimension', 'key']).doUpdateSet({
        requests: sql`usage_top_daily.requests + excluded.requests`,
        bytes: sql`usage_top_daily.bytes + excluded.bytes`,
        saved_bytes: sql`usage_top_daily.saved_bytes + excluded.saved_bytes`,
      }),
    )
    .execute();
  const origins = [...new Set(rows.map((row) => row.origin_id))];
  const days = [...new Set(rows.map((row) => row.day))];
  await sql`
    delete from usage_top_daily as t
    using (
      select origin_id, day, dimension, key,
        row_number() over (partition by origin_id, day, dimension order by requests desc, key) as rank
      from usage_top_daily
      where origin_id in (${sql.join(origins)}) and day in (${sql.join(days)})
    ) as ranked
    where ranked.rank > ${TOP_ROWS_KEPT}
      and t.origin_id = ranked.origin_id and t.day = ranked.day
      and t.dimension = ranked.dimension and t.key = ranked.key
  `.execute(trx);
}
