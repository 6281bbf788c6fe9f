import { sql, type Kysely } from 'kysely';

/**
 * Login, second-step, reset-mail and API limits moved to rate-limiter-flexible (memory, or
 * Redis in a fleet): a database write per failure, and per API call, was the cost of a flood.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`drop table auth_throttle`.execute(db);
}
