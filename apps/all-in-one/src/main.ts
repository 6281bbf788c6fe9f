// The all-in-one process `npm start` runs: console server on PORT, image edge on EDGE_PORT
// and live streaming on LIVE_PORT over one database, with metrics and probes on
// METRICS_PORT. The fleet runs the same parts alone: apps/server/src/main-server.ts,
// apps/edge/src/main.ts, apps/live/src/main.ts. This composition lives in its own workspace so
// that the console server's package does not depend on the data planes.
import { createEdge } from '@ukiyo/edge';
import { createLive } from '@ukiyo/live';
import {
  consoleBanner,
  createServerDeps,
  drainServer,
  Health,
  loadConfig,
  onShutdown,
  processRegistry,
  startConsoleServer,
  startOps,
} from '@ukiyo/server';

const config = loadConfig();
const { deps, database, admin } = await createServerDeps(config, { seed: true });
const graceMs = config.SHUTDOWN_GRACE_SECONDS * 1000;
// Queued mail goes out from the console's processes (live works its own kinds of jobs).
await deps.mailer.work();

// The edge first: the console's cache screen and the public cache API reach its cache.
const edge = await createEdge(deps);
deps.cacheControl = edge;
edge.server.listen(config.EDGE_PORT, config.HOST, () => {
  console.log(`Ukiyo image edge: http://{origin name}.${config.EDGE_DOMAIN}:${config.EDGE_PORT}/`);
});
edge.tlsServer.listen(config.EDGE_TLS_PORT, config.HOST, () => {
  console.log(`Ukiyo image edge (HTTPS, custom domains): https://{custom domain}:${config.EDGE_TLS_PORT}/`);
});

const live = await createLive(deps);
live.server.listen(config.LIVE_PORT, config.HOST, () => {
  console.log(`Ukiyo live (WHIP ingest, HLS, live API): http://localhost:${config.LIVE_PORT}/`);
});
live.rtmp.listen(config.LIVE_RTMP_PORT, config.HOST, () => {
  console.log(`Ukiyo live (RTMP ingest): rtmp://localhost:${config.LIVE_RTMP_PORT}/live/{stream key}`);
});
live.rtmps?.listen(config.LIVE_RTMPS_PORT, config.HOST, () => {
  console.log(`Ukiyo live (RTMPS ingest): rtmps://localhost:${config.LIVE_RTMPS_PORT}/live/{stream key}`);
});
await live.srt.listen(config.LIVE_SRT_PORT, config.HOST);
console.log(
  `Ukiyo live (SRT ingest, UDP): srt://localhost:${config.LIVE_SRT_PORT}?streamid={channel id}&passphrase={stream secret}`,
);

const registry = processRegistry('all-in-one', [edge.metrics, live.metrics]);
// Readiness of the whole process: the console's checks, the edge's and live's.
const health = new Health().include('edge', edge.health).include('live', live.health);
const consoleServer = startConsoleServer(
  deps,
  database,
  {
    registry,
    health,
    // The edge in this process loads an origin edit at once (and tells other edges over Redis).
    originsChanged: () => edge.refreshOrigins(),
  },
  (port) => console.log(consoleBanner(config, port, database, admin).join('\n')),
);
// A developer's second `npm start` (or a test run beside one) must still start: without its
// operations listener if METRICS_PORT is taken. The fleet's entry points fail instead.
const ops = await startOps(registry, health, config.METRICS_PORT, config.HOST).catch((error: unknown) => {
  deps.log.warn({ err: error, port: config.METRICS_PORT }, 'metrics and probes not listening');
  return undefined;
});
if (ops) deps.log.info({ port: ops.port }, 'metrics and probes listening');

onShutdown(deps.log, health, graceMs, [
  async () => {
    await Promise.all([
      consoleServer.stop(graceMs),
      edge.close({ graceMs }),
      // Publishers' sessions (and their ffmpeg) end after the last HLS request in flight.
      live.drain(graceMs).then(() => live.close()),
    ]);
  },
  async () => ops && drainServer(ops.server, 0),
  () => deps.limits.close(),
  () => deps.jobs.stop(graceMs),
  () => database.close(),
]);
