import { Migrator, sql, type Kysely, type Migration } from 'kysely';
import type { DatabaseHandle } from './database.ts';
import * as initial from './migrations/0001-initial.ts';
import * as live from './migrations/0002-live.ts';
import * as liveFleet from './migrations/0003-live-fleet.ts';
import * as totpReplay from './migrations/0004-totp-replay.ts';
import * as mailLinks from './migrations/0005-mail-links.ts';
import * as dropAuthThrottle from './migrations/0006-drop-auth-throttle.ts';
import * as originImageInputs from './migrations/0007-origin-image-inputs.ts';
import * as durableJobs from './migrations/0008-durable-jobs.ts';
import * as auditTrail from './migrations/0009-audit-trail.ts';
import * as apiIdempotency from './migrations/0010-api-idempotency.ts';
import * as deliveryAnalytics from './migrations/0011-delivery-analytics.ts';
import * as liveAnalytics from './migrations/0012-live-analytics.ts';

/** Ordered migrations, by name; files are never edited once landed. */
const MIGRATIONS: Record<string, Migration> = {
  '0001-initial': initial,
  '0002-live': live,
  '0003-live-fleet': liveFleet,
  '0004-totp-replay': totpReplay,
  '0005-mail-links': mailLinks,
  '0006-drop-auth-throttle': dropAuthThrottle,
  '0007-origin-image-inputs': originImageInputs,
  '0008-durable-jobs': durableJobs,
  '0009-audit-trail': auditTrail,
  '0010-api-idempotency': apiIdempotency,
  '0011-delivery-analytics': deliveryAnalytics,
  '0012-live-analytics': liveAnalytics,
};

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the migrator works on any schema
export async function migrateToLatest(db: Kysely<any>): Promise<void> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => MIGRATIONS } });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((result) => result.status === 'Error');
  if (error || failed) {
    throw new Error(`database migration ${failed?.migrationName ?? ''} failed: ${String(error)}`);
  }
}

/** The advisory lock key every process of an installation takes for its start-up ('ukiy'). */
const STARTUP_LOCK_KEY = 0x756b6979;

/**
 * Runs a process's start-up steps (migrations, reference data, first administrator) holding a
 * PostgreSQL session advisory lock, so processes starting together on one database take turns
 * and each finds the work of those before it done. The lock is held on a connection of its own
 * while the steps use the pool, and a process that dies holding it releases it with its
 * session. PGlite serves a single process: nothing to wait for.
 */
export async function withStartupLock<T>(database: DatabaseHandle, steps: () => Promise<T>): Promise<T> {
  if (database.kind === 'pglite') return steps();
  return database.db.connection().execute(async (connection) => {
    await sql`select pg_advisory_lock(${STARTUP_LOCK_KEY})`.execute(connection);
    try {
      return await steps();
    } finally {
      await sql`select pg_advisory_unlock(${STARTUP_LOCK_KEY})`.execute(connection);
    }
  });
}
