import { Migrator, type Kysely, type Migration } from 'kysely';
import * as initial from './migrations/0001-initial.ts';
import * as live from './migrations/0002-live.ts';
import * as liveFleet from './migrations/0003-live-fleet.ts';
import * as totpReplay from './migrations/0004-totp-replay.ts';

/** Ordered migrations, by name; files are never edited once landed. */
const MIGRATIONS: Record<string, Migration> = {
  '0001-initial': initial,
  '0002-live': live,
  '0003-live-fleet': liveFleet,
  '0004-totp-replay': totpReplay,
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
