import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { Db } from './types.ts';

interface Counter {
  organizationId: number;
  requests: number;
  bytes: number;
}

/**
 * Requests and outbound bytes per origin, counted in memory and added to usage_hourly and
 * usage_daily in one batch per interval (upserts that add, so several edges can write the
 * same rows). A failed flush keeps its counts for the next one.
 */
export class Metering {
  /** Keyed by `originId|hour ISO`. */
  private pending = new Map<string, Counter>();
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

  record(originId: number, organizationId: number, bytes: number, now = Date.now()): void {
    const hour = now - (now % 3_600_000);
    const key = `${originId}|${hour}`;
    const counter = this.pending.get(key);
    if (counter) {
      counter.requests++;
      counter.bytes += bytes;
    } else {
      this.pending.set(key, { organizationId, requests: 1, bytes });
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }

  flush(): Promise<void> {
    this.flushing ??= this.write().finally(() => {
      this.flushing = undefined;
    });
    return this.flushing;
  }

  private async write(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    const hourly = [...batch].map(([key, counter]) => {
      const [originId, hour] = key.split('|').map(Number) as [number, number];
      return {
        origin_id: originId,
        organization_id: counter.organizationId,
        hour: new Date(hour),
        requests: counter.requests,
        outbound_bytes: counter.bytes,
      };
    });
    const daily = new Map<string, (typeof hourly)[number] & { day: string }>();
    for (const row of hourly) {
      const day = row.hour.toISOString().slice(0, 10);
      const key = `${row.origin_id}|${day}`;
      const existing = daily.get(key);
      if (existing) {
        existing.requests += row.requests;
        existing.outbound_bytes += row.outbound_bytes;
      } else {
        daily.set(key, { ...row, day });
      }
    }
    try {
      await this.db.transaction().execute(async (trx) => {
        // Rows of an origin deleted since the requests were counted would break the batch.
        const live = new Set(
          (
            await trx
              .selectFrom('origins')
              .select('id')
              .where('id', 'in', [...new Set(hourly.map((r) => r.origin_id))])
              .execute()
          ).map((r) => r.id),
        );
        const hours = hourly.filter((row) => live.has(row.origin_id));
        const days = [...daily.values()].filter((row) => live.has(row.origin_id));
        if (hours.length === 0) return;
        await trx
          .insertInto('usage_hourly')
          .values(hours)
          .onConflict((oc) =>
            oc.columns(['origin_id', 'hour']).doUpdateSet({
              requests: sql`usage_hourly.requests + excluded.requests`,
              outbound_bytes: sql`usage_hourly.outbound_bytes + excluded.outbound_bytes`,
            }),
          )
          .execute();
        await trx
          .insertInto('usage_daily')
          .values(
            days.map(({ origin_id, organization_id, day, requests, outbound_bytes }) => ({
              origin_id,
              organization_id,
              day,
              requests,
              outbound_bytes,
            })),
          )
          .onConflict((oc) =>
            oc.columns(['origin_id', 'day']).doUpdateSet({
              requests: sql`usage_daily.requests + excluded.requests`,
              outbound_bytes: sql`usage_daily.outbound_bytes + excluded.outbound_bytes`,
            }),
          )
          .execute();
      });
    } catch (error) {
      this.log.warn({ err: error }, 'usage flush failed; retrying with the next batch');
      for (const [key, counter] of batch) {
        const current = this.pending.get(key);
        if (current) {
          current.requests += counter.requests;
          current.bytes += counter.bytes;
        } else {
          this.pending.set(key, counter);
        }
      }
    }
  }
}
