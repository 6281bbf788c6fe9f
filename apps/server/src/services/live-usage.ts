import { sql } from 'kysely';
import type { Db } from '../db/database.ts';

/** Live usage over a period, as the console shows it (contract entity LiveUsage). */
export interface LiveUsageFigures {
  connectedSeconds: number;
  connections: number;
  maxConcurrent: number;
  bytesIn: number;
  hlsRequests: number;
  hlsBytesOut: number;
}

export interface LiveUsageHour {
  channelId: string;
  /** `YYYY-MM-DDTHH`, UTC. */
  hour: string;
  connectedSeconds: number;
  connections: number;
  maxConcurrent: number;
  bytesIn: number;
  hlsRequests: number;
  hlsBytesOut: number;
}

export interface LiveUsageReport {
  channels: (LiveUsageFigures & { channelId: string; daily: (LiveUsageFigures & { day: string })[] })[];
  total: LiveUsageFigures;
  daily: (LiveUsageFigures & { day: string })[];
}

const zero = (): LiveUsageFigures => ({
  connectedSeconds: 0,
  connections: 0,
  maxConcurrent: 0,
  bytesIn: 0,
  hlsRequests: 0,
  hlsBytesOut: 0,
});

/** Adds an hour's counters; the concurrency peak is kept by the caller (it depends on grouping). */
function addCounts(target: LiveUsageFigures, hour: LiveUsageHour): void {
  target.connectedSeconds += hour.connectedSeconds;
  target.connections += hour.connections;
  target.bytesIn += hour.bytesIn;
  target.hlsRequests += hour.hlsRequests;
  target.hlsBytesOut += hour.hlsBytesOut;
}

function entry<T>(map: Map<string, T>, key: string, create: () => T): T {
  let value = map.get(key);
  if (value === undefined) {
    value = create();
    map.set(key, value);
  }
  return value;
}

const byKey = <T>(map: Map<string, T>) => [...map.entries()].sort(([a], [b]) => a.localeCompare(b));

/**
 * Folds hourly rows (one per channel and hour) into per channel, per channel and day, per day
 * and total figures. Rows record each channel's own peak per hour, so the peak of several
 * channels together is the largest sum of their peaks within one hour: an upper bound that is
 * exact whenever the channels' peaks fall in the same hour, and never an undercount.
 */
export function summarizeLiveUsage(hours: readonly LiveUsageHour[]): LiveUsageReport {
  const channels = new Map<string, { figures: LiveUsageFigures; days: Map<string, LiveUsageFigures> }>();
  const days = new Map<string, LiveUsageFigures>();
  const peakPerHour = new Map<string, number>();
  const total = zero();
  for (const hour of hours) {
    const day = hour.hour.slice(0, 10);
    const channel = entry(channels, hour.channelId, () => ({ figures: zero(), days: new Map() }));
    const channelDay = entry(channel.days, day, zero);
    for (const figures of [channel.figures, channelDay, entry(days, day, zero), total]) {
      addCounts(figures, hour);
    }
    channel.figures.maxConcurrent = Math.max(channel.figures.maxConcurrent, hour.maxConcurrent);
    channelDay.maxConcurrent = Math.max(channelDay.maxConcurrent, hour.maxConcurrent);
    peakPerHour.set(hour.hour, (peakPerHour.get(hour.hour) ?? 0) + hour.maxConcurrent);
  }
  for (const [hour, peak] of peakPerHour) {
    const day = days.get(hour.slice(0, 10))!;
    day.maxConcurrent = Math.max(day.maxConcurrent, peak);
    total.maxConcurrent = Math.max(total.maxConcurrent, peak);
  }
  return {
    channels: byKey(channels).map(([channelId, { figures, days: perDay }]) => ({
      channelId,
      ...figures,
      daily: byKey(perDay).map(([day, dayFigures]) => ({ day, ...dayFigures })),
    })),
    total,
    daily: byKey(days).map(([day, figures]) => ({ day, ...figures })),
  };
}

/** An organization's live usage within [from, to), hours taken whole. */
export async function liveUsageReport(
  db: Db,
  organizationId: number,
  from: Date,
  to: Date,
): Promise<LiveUsageReport> {
  const rows = await db
    .selectFrom('live_usage_hourly')
    .select([
      'channel_id',
      sql<string>`to_char(hour at time zone 'UTC', 'YYYY-MM-DD"T"HH24')`.as('hour'),
      'connected_seconds',
      'connections',
      'max_concurrent',
      'bytes_in',
      'hls_requests',
      'hls_bytes_out',
    ])
    .where('organization_id', '=', organizationId)
    .where('hour', '>=', from)
    .where('hour', '<', to)
    .execute();
  return summarizeLiveUsage(
    rows.map((row) => ({
      channelId: row.channel_id,
      hour: row.hour,
      connectedSeconds: Number(row.connected_seconds),
      connections: Number(row.connections),
      maxConcurrent: Number(row.max_concurrent),
      bytesIn: Number(row.bytes_in),
      hlsRequests: Number(row.hls_requests),
      hlsBytesOut: Number(row.hls_bytes_out),
    })),
  );
}
