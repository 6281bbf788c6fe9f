// The console server alone (`npm run start:server`): ui-api, public API and the console on
// PORT over PostgreSQL, with metrics and probes on METRICS_PORT. With REDIS_URL its cache
// calls reach every edge process (apps/edge/src/main.ts) and origin edits reach them at once.
import { CacheRequester } from '@ukiyo/edge';
import { consoleBanner, startConsoleServer } from './console-server.ts';
import { AppError } from './http/app-error.ts';
import { drainServer } from './http/drain.ts';
import { Health, redisCheck } from './http/health.ts';
import { createServerDeps, loadConfig } from './index.ts';
import { onShutdown, processRegistry, startOps } from './process.ts';

const config = loadConfig();
const { deps, database, admin } = await createServerDeps(config, { seed: true });
const graceMs = config.SHUTDOWN_GRACE_SECONDS * 1000;
// Queued mail goes out from the console's processes.
await deps.mailer.work();
const registry = processRegistry('server');
const health = new Health();

const requester = config.REDIS_URL
  ? new CacheRequester(config.REDIS_URL, deps.log, config.CACHE_CALL_TIMEOUT_MS)
  : undefined;
if (requester) {
  const unavailable = (error: unknown): never => {
    deps.log.warn({ err: error }, 'cache call over redis failed');
    throw new AppError('cache unavailable');
  };
  deps.cacheControl = {
    lookup: (originId, url) => requester.lookup(originId, url).catch(unavailable),
    purge: (originId, url) => requester.purge(originId, url).catch(unavailable),
    purgePrefix: (originId, pathPrefix) => requester.purgePrefix(originId, pathPrefix).catch(unavailable),
  };
  health.add(
    'redis',
    redisCheck(() => requester.ping()),
  );
}

const consoleServer = startConsoleServer(
  deps,
  database,
  {
    registry,
    health,
    originsChanged: requester && (() => requester.originsChanged()),
  },
  (port) => {
    const lines = consoleBanner(config, port, database, admin);
    if (!config.REDIS_URL) lines.push('  REDIS_URL unset: cache calls answer "cache unavailable"');
    console.log(lines.join('\n'));
  },
);
const ops = await startOps(registry, health, config.METRICS_PORT, config.HOST);
deps.log.info({ port: ops.port }, 'metrics and probes listening');

onShutdown(deps.log, health, graceMs, [
  () => consoleServer.stop(graceMs),
  () => drainServer(ops.server, 0),
  async () => requester?.close(),
  () => deps.invalidations.close(),
  () => deps.limits.close(),
  () => deps.jobs.stop(graceMs),
  () => database.close(),
]);
