import { sql, type Kysely } from 'kysely';

/**
 * Idempotency keys of the Platform API's creating calls (/api/v1, issue 19): per token and key,
 * what the first call asked (method, path and a digest of its body) and, once it finished, its
 * status and answer, sealed by the SecretBox (a created token's secret is in its answer). A row
 * without a status is a call still running. Rows older than a day are replaced on reuse.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table api_idempotency (
      token_id integer not null references auth_tokens (id) on delete cascade,
      idempotency_key text not null,
      request_digest text not null,
      status integer,
      body_enc text,
      created_at timestamptz not null default now(),
      primary key (token_id, idempotency_key)
    )
  `.execute(db);
}
