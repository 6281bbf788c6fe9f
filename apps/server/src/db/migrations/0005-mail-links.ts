import { sql, type Kysely } from 'kysely';

/**
 * Mails with a single-use link (activation, password reset) keep it readable in the outbox
 * only while it works: `link_token_hash` finds the token it opens, `redacted_body` is the body
 * with the token masked, swapped in once the mail is sent over SMTP or the token is used or
 * expired. Mails written before this keep their links masked at once when they were sent or
 * are older than the longest link lifetime (activation, 7 days).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table mail_outbox add column link_token_hash text, add column redacted_body text;
    update mail_outbox
      set body = regexp_replace(body, '(activate/|token=)[A-Za-z0-9_-]{43}', '\\1************', 'g')
      where sent_at is not null or created_at < now() - interval '7 days';
  `.execute(db);
}
