import { sql, type Kysely } from 'kysely';

/**
 * Durable work (issue 20). Each live organization signs its webhooks with a secret of its own
 * (Standard Webhooks, `whsec_…`, sealed by the SecretBox; made on first use or rotation). An
 * archived file waits in `archive_uploads` until its upload job has put it in the bucket: the
 * live process may be killed meanwhile, and ffmpeg deletes old segments from disk. The job queue's
 * own tables are pg-boss's, in its schema `pgboss`, created and migrated by pg-boss at start.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table organizations
      add column webhook_secret_enc text,
      add column webhook_secret_created_at timestamptz
  `.execute(db);
  await sql`
    create table archive_uploads (
      id bigserial primary key,
      organization_id integer not null references organizations (id),
      destination_id text not null,
      connection_id text not null,
      object_key text not null,
      file_type text not null,
      body bytea not null,
      created_at timestamptz not null default now()
    )
  `.execute(db);
  await sql`create index archive_uploads_connection on archive_uploads (connection_id, id)`.execute(db);
}
