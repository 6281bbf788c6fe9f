import { sql, type Kysely } from 'kysely';

/**
 * Live across several processes and the connection count:
 * - `channels.host_url`: where the live process holding the channel's publisher serves its HLS
 *   files, so any other live process behind the same public URL can pass requests on to it;
 * - `live_usage_hourly.connections`: WebRTC connections opened in the hour (the dashboard's
 *   cumulative WebRTC count).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table channels add column host_url text;
    alter table live_usage_hourly add column connections integer not null default 0;
  `.execute(db);
}
