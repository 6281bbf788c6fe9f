import { sql, type Kysely } from 'kysely';

/**
 * Live state every process can read (channel.list on the console server shows what the live
 * process is doing): the current publisher's connection, its playlist URL and a heartbeat so a
 * crashed process's claim on a channel expires; and the key id of the channel's HLS key.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table channels add column kid text;
    create unique index channels_kid_idx on channels (kid) where kid is not null;
    alter table channels add column active_connections integer not null default 0;
    alter table channels add column connection_id text;
    alter table channels add column playlist_url text;
    alter table channels add column heartbeat_at timestamptz;
  `.execute(db);
}
