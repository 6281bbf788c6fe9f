import { sql, type Kysely } from 'kysely';

/**
 * The last TOTP time step a user's code was accepted for: a code (or any earlier one) is
 * accepted once, so a code seen over a shoulder or in a proxy log cannot be replayed.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table users add column totp_last_step bigint`.execute(db);
}
