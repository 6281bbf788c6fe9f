import { sql, type Kysely } from 'kysely';

/**
 * Live analytics per channel and hour beside the WebRTC connections (publishers and viewers
 * together, as the dashboard counts them): the publisher's own connected time, and the most
 * HLS viewers at once (distinct clients fetching within one usage flush, ~5 s).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table live_usage_hourly
      add column publishing_seconds bigint not null default 0,
      add column hls_max_viewers bigint not null default 0
  `.execute(db);
}
