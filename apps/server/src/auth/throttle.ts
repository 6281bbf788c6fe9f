import { sql } from 'kysely';
import type { Db } from '../db/database.ts';

export interface ThrottleRule {
  /** Failures allowed within the window before the key is locked. */
  limit: number;
  windowMs: number;
  lockMs: number;
}

/**
 * Failure counters in the database, so every server process shares them. Keys are
 * `{purpose}:{kind}:{value}`, e.g. `login:email:a@example.com`, `login:ip:127.0.0.1`.
 */
export class Throttle {
  constructor(
    private readonly db: Db,
    private readonly now: () => number = Date.now,
  ) {}

  async isLocked(keys: readonly string[]): Promise<boolean> {
    const row = await this.db
      .selectFrom('auth_throttle')
      .select('key')
      .where('key', 'in', keys)
      .where('locked_until', '>', new Date(this.now()))
      .executeTakeFirst();
    return row !== undefined;
  }

  async recordFailure(key: string, rule: ThrottleRule): Promise<void> {
    const now = new Date(this.now());
    const windowStart = new Date(this.now() - rule.windowMs);
    const lockUntil = new Date(this.now() + rule.lockMs);
    await this.db
      .insertInto('auth_throttle')
      .values({ key, failures: 1, window_started_at: now, locked_until: rule.limit <= 1 ? lockUntil : null })
      .onConflict((conflict) =>
        conflict.column('key').doUpdateSet({
          failures: sql`case when auth_throttle.window_started_at < ${windowStart} then 1 else auth_throttle.failures + 1 end`,
          window_started_at: sql`case when auth_throttle.window_started_at < ${windowStart} then ${now} else auth_throttle.window_started_at end`,
          locked_until: sql`case when auth_throttle.window_started_at >= ${windowStart} and auth_throttle.failures + 1 >= ${rule.limit} then ${lockUntil} else auth_throttle.locked_until end`,
        }),
      )
      .execute();
  }

  async reset(key: string): Promise<void> {
    await this.db.deleteFrom('auth_throttle').where('key', '=', key).execute();
  }
}

export const LOGIN_PER_EMAIL: ThrottleRule = { limit: 5, windowMs: 15 * 60_000, lockMs: 15 * 60_000 };
export const LOGIN_PER_IP: ThrottleRule = { limit: 30, windowMs: 15 * 60_000, lockMs: 15 * 60_000 };
