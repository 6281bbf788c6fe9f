import type { Logger } from 'pino';
import { SessionStore } from './auth/session-store.ts';
import { Throttle } from './auth/throttle.ts';
import type { Config } from './config.ts';
import { SecretBox } from './crypto/secret-box.ts';
import { Mailer } from './mail/mailer.ts';
import { openDatabase, type DatabaseHandle } from './db/database.ts';
import { migrateToLatest } from './db/migrate.ts';
import { createLogger } from './logger.ts';
import { ensureGuestPreviewOrigin } from './services/bootstrap.ts';
import type { ServerDeps } from './operations/context.ts';

export { loadConfig, type Config } from './config.ts';
export { createServerApp } from './http/app.ts';
export { drainServer } from './http/drain.ts';
export { databaseCheck, diskCheck, Health, redisCheck, type HealthCheck } from './http/health.ts';
export { createOpsServer } from './http/ops.ts';
export { createLogger } from './logger.ts';
export { listen, onShutdown, processRegistry, startOps } from './process.ts';
export { bootstrapAdministrator, ensureDemoOrganization } from './services/bootstrap.ts';
export type { ServerDeps } from './operations/context.ts';
// What the live app shares with the console: API tokens and their limits, channel records.
export type { TokenPrincipal } from './auth/api-tokens.ts';
export { Throttle } from './auth/throttle.ts';
export { AppError } from './http/app-error.ts';
export { bearerAuth } from './http/public-api.ts';
export { clientAddress } from './http/request.ts';
export {
  createChannelRecord,
  findChannel,
  listChannels,
  liveBaseUrl,
  markChannelDeleting,
  type ChannelRow,
  type ChannelSettings,
} from './operations/channels.ts';

/** Opens and migrates the database and builds what every handler shares. */
export async function createServerDeps(
  config: Config,
  options: { log?: Logger } = {},
): Promise<{ deps: ServerDeps; database: DatabaseHandle }> {
  const database = await openDatabase({ databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR });
  await migrateToLatest(database.db);
  // Reference data every installation has, like its schema: the guest preview's origin.
  await ensureGuestPreviewOrigin(database.db, config);
  const log = options.log ?? createLogger(config, 'server');
  const sessions = new SessionStore(database.db, {
    idleMs: config.SESSION_IDLE_MINUTES * 60_000,
    absoluteMs: config.SESSION_ABSOLUTE_HOURS * 3_600_000,
  });
  const deps: ServerDeps = {
    config,
    db: database.db,
    sessions,
    throttle: new Throttle(database.db),
    secrets: SecretBox.load({ secretKey: config.SECRET_KEY, dataDir: config.DATA_DIR }),
    mailer: new Mailer(database.db, { smtpUrl: config.SMTP_URL, from: config.MAIL_FROM }, log),
    log,
  };
  return { deps, database };
}
