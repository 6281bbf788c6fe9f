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
  publishingSeconds: number;
  hlsMaxViewers: number;
}

/** Figures that add up over hours and channels; the others are peaks. */
const SUMMED = [
  'connectedSeconds',
  'connections',
  'bytesIn',
  'hlsRequests',
  'hlsBytesOut',
  'publishingSeconds',
] as const satisfies (keyof LiveUsageFigures)[];
/** Peaks, kept per channel and hour: over hours the largest, over channels within an hour the sum. */
const PEAKS = ['maxConcurrent', 'hlsMaxViewers'] as const satisfies (keyof LiveUsageFigures)[];

export type LiveUsageHour = LiveUsageFigures & {
  channelId: string;
  /** `YYYY-MM-DDTHH`, UTC. */
  hour: string;
};

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
  publishingSeconds: 0,
  hlsMaxViewers: 0,
});

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
 * and total figures. Rows record each channel's own peaks per hour, so a peak of several
 * channels together is the largest sum of their peaks within one hour: an upper bound that is
 * exact whenever the channels' peaks fall in the same hour, and never an undercount.
 */
export function summarizeLiveUsage(hours: readonly LiveUsageHour[]): LiveUsageReport {
  const channels = new Map<string, { figures: LiveUsageFigures; days: Map<string, LiveUsageFigures> }>();
  const days = new Map<string, LiveUsageFigures>();
  const peaksPerHour = new Map<string, LiveUsageFigures>();
  const total = zero();
  for (const hour of hours) {
    const day = hour.hour.slice(0, 10);
    const channel = entry(channels, hour.channelId, () => ({ figures: zero(), days: new Map() }));
    const channelDay = entry(channel.days, day, zero);
    for (const figures of [channel.figures, channelDay, entry(days, day, zero), total]) {
      for (const field of SUMMED) figures[field] += hour[field];
    }
    const together = entry(peaksPerHour, hour.hour, zero);
    for (const field of PEAKS) {
      channel.figures[field] = Math.max(channel.figures[field], hour[field]);
      channelDay[field] = Math.max(channelDay[field], hour[field]);
      together[field] += hour[field];
    }
  }
  for (const [hour, peaks] of peaksPerHour) {
    const day = days.get(hour.slice(0, 10))!;
    for (const field of PEAKS) {
      day[field] = Math.max(day[field], peaks[field]);
      total[field] = Math.max(total[field], peaks[field]);
    }
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
      'publishing_seconds',
      'hls_max_viewers',
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
      publishingSeconds: Number(row.publishing_seconds),
      hlsMaxViewers: Number(row.hls_max_viewers),
    })),
  );
}
