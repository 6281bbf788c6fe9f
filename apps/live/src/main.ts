// Live streaming alone (`npm run start:live`): WHIP ingest, HLS output and the live API on
// LIVE_PORT, RTMP ingest on LIVE_RTMP_PORT (RTMPS on LIVE_RTMPS_PORT) and SRT ingest on
// LIVE_SRT_PORT (UDP) over the shared database, metrics and probes on METRICS_PORT. Several can
// run behind one LIVE_PUBLIC_URL, each with its own LIVE_INTERNAL_URL: a viewer's request
// reaching a process that does not hold the channel's publisher is passed on to the one that does.
import {
  createLogger,
  createServerDeps,
  drainServer,
  listen,
  loadConfig,
  onShutdown,
  processRegistry,
  startOps,
} from '@ukiyo/server';
import { createLive } from './index.ts';

const config = loadConfig();
const log = createLogger(config, 'live');
const { deps, database } = await createServerDeps(config, { log });
const graceMs = config.SHUTDOWN_GRACE_SECONDS * 1000;
const live = await createLive(deps);

const port = await listen(live.server, config.LIVE_PORT, config.HOST);
const rtmpPort = await listen(live.rtmp, config.LIVE_RTMP_PORT, config.HOST);
const rtmpsPort =
  live.rtmps && config.LIVE_RTMPS_PORT !== undefined
    ? await listen(live.rtmps, config.LIVE_RTMPS_PORT, config.HOST)
    : undefined;
const srtPort = await live.srt.listen(config.LIVE_SRT_PORT, config.HOST);
const registry = processRegistry('live', [live.metrics]);
const ops = await startOps(registry, live.health, config.METRICS_PORT, config.HOST);
log.info(
  {
    port,
    rtmpPort,
    rtmpsPort: rtmpsPort ?? null,
    srtPort,
    metricsPort: ops.port,
    internalUrl: config.LIVE_INTERNAL_URL ?? null,
  },
  'live streaming listening',
);

onShutdown(log, live.health, graceMs, [
  // Publishers' sessions (and their ffmpeg) end after the last HLS request in flight.
  () => live.drain(graceMs).then(() => live.close()),
  () => drainServer(ops.server, 0),
  () => deps.limits.close(),
  () => deps.jobs.stop(graceMs),
  () => database.close(),
]);
