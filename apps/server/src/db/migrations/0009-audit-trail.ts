import { sql, type Kysely } from 'kysely';

/**
 * The audit trail (issue 18): configuration changes join sign-ins and sign-outs in
 * `audit_events`, one ordered log, so a page of it is one indexed range read whatever its
 * kinds. A change names the operation, its subject, the API token it came with (if any) and the
 * changed fields before and after, secrets already masked. Pages run newest first by id, per
 * user (one's own activity) and per organization (the organization's trail).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table audit_events
      add column token_id integer,
      add column token_name text,
      add column operation text,
      add column subject text not null default '',
      add column before jsonb,
      add column after jsonb
  `.execute(db);
  await sql`drop index audit_events_user_idx`.execute(db);
  await sql`create index audit_events_user_idx on audit_events (user_id, id desc)`.execute(db);
  await sql`create index audit_events_organization_idx on audit_events (organization_id, id desc)`.execute(
    db,
  );
}
