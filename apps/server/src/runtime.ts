// What every process of the product shares, without the console's HTTP app, jobs, mail or
// sign-in (`@ukiyo/server/runtime`). The image edge imports only this: each module loaded stays
// on the heap that every garbage collection marks, and a miss's output buffers set a collection
// off every few dozen misses (bench/edge.ts).
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Config } from './config.ts';
import { keyBesideDatabase, SecretBox } from './crypto/secret-box.ts';
import { openDatabase, type Db, type DatabaseHandle } from './db/database.ts';
import { migrateToLatest, withStartupLock } from './db/migrate.ts';
import { ensureGuestPreviewOrigin } from './services/bootstrap.ts';

export { loadConfig, type Config } from './config.ts';
export { USAGE_COUNTERS, type UsageCounter } from './db/tables.ts';
export { drainServer } from './http/drain.ts';
export { databaseCheck, diskCheck, Health, redisCheck, type HealthCheck } from './http/health.ts';
export { createLogger } from './logger.ts';
export { listen, onShutdown, processRegistry, startOps } from './process.ts';
export type { Db, SecretBox };

/** What a process needs of the store: its settings, the database, sealed secrets, the log. */
export interface ProcessDeps {
  config: Config;
  db: Db;
  secrets: SecretBox;
  log: Logger;
}

/**
 * Opens the database, migrated to the latest schema and holding the reference data every
 * installation has (the guest preview's origin); `underLock` runs in the same turn of the
 * start-up lock (processes starting together take turns), for the console's own set-up.
 */
export async function openProcessDeps<T>(
  config: Config,
  log: Logger,
  underLock: (database: DatabaseHandle) => Promise<T>,
): Promise<{ deps: ProcessDeps; database: DatabaseHandle; prepared: T }> {
  const database = await openDatabase({ databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR });
  const prepared = await withStartupLock(database, async () => {
    await migrateToLatest(database.db);
    await ensureGuestPreviewOrigin(database.db, config);
    return underLock(database);
  });
  if (keyBesideDatabase(config))
    log.warn(
      { path: join(config.DATA_DIR, 'secret.key') },
      'SECRET_KEY is unset: the generated key sits beside the embedded database, so a copy of DATA_DIR opens every sealed secret; set SECRET_KEY and keep it elsewhere',
    );
  const secrets = SecretBox.load({ secretKey: config.SECRET_KEY, dataDir: config.DATA_DIR });
  return { deps: { config, db: database.db, secrets, log }, database, prepared };
}
