import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { Database } from './tables.ts';
import { PGliteDialect } from './pglite-dialect.ts';
import { PGliteThread } from './pglite-thread.ts';

// bigint counters (usage bytes) stay far below 2^53; numbers everywhere, as PGlite returns.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));
// A calendar date stays the 'YYYY-MM-DD' it is: a Date would shift it by the local time zone.
pg.types.setTypeParser(pg.types.builtins.DATE, (value) => value);

export type Db = Kysely<Database>;

/** One process serves one small embedded database: Postgres' 128 MB of buffers would be waste. */
const PGLITE_SETTINGS = ['shared_buffers=16MB'];

export interface DatabaseHandle {
  db: Db;
  kind: 'pglite' | 'postgres';
  close(): Promise<void>;
}

/**
 * PostgreSQL when a URL is given, else embedded PGlite under `{dataDir}/pg`, on a thread of its
 * own so its work never holds up the thread that answers requests.
 */
export async function openDatabase(options: {
  databaseUrl?: string;
  dataDir: string;
}): Promise<DatabaseHandle> {
  if (options.databaseUrl) {
    const pool = new pg.Pool({ connectionString: options.databaseUrl, max: 10 });
    // A dropped connection must not crash the process: the pool replaces it.
    pool.on('error', () => {});
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    return { db, kind: 'postgres', close: () => db.destroy() };
  }
  const directory = join(options.dataDir, 'pg');
  mkdirSync(directory, { recursive: true });
  const db = new Kysely<Database>({
    dialect: new PGliteDialect(new PGliteThread(directory, PGLITE_SETTINGS)),
  });
  return { db, kind: 'pglite', close: () => db.destroy() };
}
