import type { Logger } from 'pino';
import { SessionStore } from './auth/session-store.ts';
import { RateLimits } from './auth/rate-limits.ts';
import type { Config } from './config.ts';
import { JobQueue } from './jobs/queue.ts';
import { Invalidations } from './services/invalidations.ts';
import { OriginLists } from './services/origin-lists.ts';
import { Mailer } from './mail/mailer.ts';
import { bootstrapAdministrator, type BootstrappedAdmin } from './services/administrator.ts';
import { ensureDemoOrganization } from './services/bootstrap.ts';
import type { ServerDeps } from './operations/context.ts';
import type { DatabaseHandle } from './db/database.ts';
import { createLogger, openProcessDeps } from './runtime.ts';

// What every process shares; the edge imports it alone (@ukiyo/server/runtime).
export * from './runtime.ts';
// The all-in-one entry (apps/all-in-one) composes the console server with the edge and live.
export { consoleBanner, startConsoleServer } from './console-server.ts';
export { createServerApp } from './http/app.ts';
export { createOpsServer } from './http/ops.ts';
// The SDK (packages/sdk) generates its types from this document.
export { openApiDocument } from './http/openapi.ts';
export { bootstrapAdministrator } from './services/administrator.ts';
export { ensureDemoOrganization } from './services/bootstrap.ts';
export type { ServerDeps } from './operations/context.ts';
// What the live app shares with the console: API tokens and their limits, channel records.
export type { TokenPrincipal } from './auth/api-tokens.ts';
export type { RateLimits } from './auth/rate-limits.ts';
export { AppError } from './http/app-error.ts';
export { JobQueue, type Job, type JobTarget } from './jobs/queue.ts';
export { webhookSecret } from './services/webhook-secrets.ts';
export { authorizePublisher, bearerAuth, countBadCredential, publishAuth } from './http/public-api.ts';
export { channelOfStreamKey, channelStreamSecret } from './auth/stream-keys.ts';
export { clientAddress } from './http/request.ts';
export { addressOf, isWholeRequest, parseRequestHead, type RequestHead } from './http/request-head.ts';
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
  const log = options.log ?? createLogger(config, 'server');
  const {
    deps: base,
    database,
    prepared: { jobs, admin },
  } = await openProcessDeps(config, log, async ({ db, kind }) => {
    // Embedded PGlite admits one process at a time: this one is the only worker.
    const jobs = new JobQueue(db, log, { soleWorker: kind === 'pglite' });
    await jobs.start();
    if (!options.seed) return { jobs, admin: undefined };
    if (config.DEMO) await ensureDemoOrganization(db, config);
    return { jobs, admin: await bootstrapAdministrator(db, config) };
  });
  const invalidations = new Invalidations(
    config.REDIS_URL
      ? { redisUrl: config.REDIS_URL, log, timeoutMs: config.CACHE_CALL_TIMEOUT_MS }
      : undefined,
  );
  const sessions = new SessionStore(
    base.db,
    {
      idleMs: config.SESSION_IDLE_MINUTES * 60_000,
      absoluteMs: config.SESSION_ABSOLUTE_HOURS * 3_600_000,
    },
    Date.now,
    invalidations,
  );
  const deps: ServerDeps = {
    ...base,
    sessions,
    invalidations,
    originLists: new OriginLists(invalidations),
    limits: new RateLimits({ redisUrl: config.REDIS_URL, log }),
    mailer: new Mailer(base.db, jobs, { smtpUrl: config.SMTP_URL, from: config.MAIL_FROM }, log),
    jobs,
  };
  return { deps, database, admin };
}
