import { join } from 'node:path';
import type { Logger } from 'pino';
import { SessionStore } from './auth/session-store.ts';
import { RateLimits } from './auth/rate-limits.ts';
import type { Config } from './config.ts';
import { keyBesideDatabase, SecretBox } from './crypto/secret-box.ts';
import { JobQueue } from './jobs/queue.ts';
import { Invalidations } from './services/invalidations.ts';
import { OriginLists } from './services/origin-lists.ts';
import { Mailer } from './mail/mailer.ts';
import { openDatabase, type DatabaseHandle } from './db/database.ts';
import { migrateToLatest, withStartupLock } from './db/migrate.ts';
import { createLogger } from './logger.ts';
import {
  bootstrapAdministrator,
  ensureDemoOrganization,
  ensureGuestPreviewOrigin,
  type BootstrappedAdmin,
} from './services/bootstrap.ts';
import type { ServerDeps } from './operations/context.ts';

export { loadConfig, type Config } from './config.ts';
// The all-in-one entry (apps/all-in-one) composes the console server with the edge and live.
export { consoleBanner, startConsoleServer } from './console-server.ts';
export { createServerApp } from './http/app.ts';
export { drainServer } from './http/drain.ts';
export { databaseCheck, diskCheck, Health, redisCheck, type HealthCheck } from './http/health.ts';
export { createOpsServer } from './http/ops.ts';
// The SDK (packages/sdk) generates its types from this document.
export { openApiDocument } from './http/openapi.ts';
export { USAGE_COUNTERS, type UsageCounter } from './db/tables.ts';
export { createLogger } from './logger.ts';
export { listen, onShutdown, processRegistry, startOps } from './process.ts';
export { bootstrapAdministrator, ensureDemoOrganization } from './services/bootstrap.ts';
export type { ServerDeps } from './operations/context.ts';
// What the live app shares with the console: API tokens and their limits, channel records.
export type { TokenPrincipal } from './auth/api-tokens.ts';
export type { RateLimits } from './auth/rate-limits.ts';
export { AppError } from './http/app-error.ts';
export { JobQueue, type Job, type JobTarget } from './jobs/queue.ts';
export { webhookSecret } from './services/webhook-secrets.ts';
export { authorizePublisher, bearerAuth, countBadCredential, publishAuth } from './http/public-api.ts';
export { channelOfStreamKey, channelStreamSecret } from './auth/stream-keys.ts';
export { addressOf, clientAddress } from './http/request.ts';
export { refusePrivateUrls } from './services/public-hosts.ts';
export {
  createChannelRecord,
  findChannel,
  ingestEndpoints,
  listChannels,
  liveBaseUrl,
  markChannelDeleting,
  PUBLISHER_STALE_MS,
  type ChannelRow,
  type ChannelSettings,
} from './operations/channels.ts';

/**
 * Opens and migrates the database and builds what every handler shares. With `seed` (the
 * console's entry points) start-up also creates the first administrator and, with DEMO=1, the
 * demo organization; `admin` is set only when this process created the administrator.
 */
export async function createServerDeps(
  config: Config,
  options: { log?: Logger; seed?: boolean } = {},
): Promise<{ deps: ServerDeps; database: DatabaseHandle; admin?: BootstrappedAdmin }> {
  const database = await openDatabase({ databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR });
  const log = options.log ?? createLogger(config, 'server');
  const jobs = new JobQueue(database.db, log);
  const admin = await withStartupLock(database, async () => {
    await migrateToLatest(database.db);
    await jobs.start();
    // Reference data every installation has, like its schema: the guest preview's origin.
    await ensureGuestPreviewOrigin(database.db, config);
    if (!options.seed) return undefined;
    if (config.DEMO) await ensureDemoOrganization(database.db, config);
    return bootstrapAdministrator(database.db, config);
  });
  if (keyBesideDatabase(config))
    log.warn(
      { path: join(config.DATA_DIR, 'secret.key') },
      'SECRET_KEY is unset: the generated key sits beside the embedded database, so a copy of DATA_DIR opens every sealed secret; set SECRET_KEY and keep it elsewhere',
    );
  const invalidations = new Invalidations(
    config.REDIS_URL
      ? { redisUrl: config.REDIS_URL, log, timeoutMs: config.CACHE_CALL_TIMEOUT_MS }
      : undefined,
  );
  const sessions = new SessionStore(
    database.db,
    {
      idleMs: config.SESSION_IDLE_MINUTES * 60_000,
      absoluteMs: config.SESSION_ABSOLUTE_HOURS * 3_600_000,
    },
    Date.now,
    invalidations,
  );
  const deps: ServerDeps = {
    config,
    db: database.db,
    sessions,
    invalidations,
    originLists: new OriginLists(invalidations),
    limits: new RateLimits({ redisUrl: config.REDIS_URL, log }),
    secrets: SecretBox.load({ secretKey: config.SECRET_KEY, dataDir: config.DATA_DIR }),
    mailer: new Mailer(database.db, jobs, { smtpUrl: config.SMTP_URL, from: config.MAIL_FROM }, log),
    jobs,
    log,
  };
  return { deps, database, admin };
}
