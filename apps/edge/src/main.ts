// The image edge alone (`npm run start:edge`): delivery on EDGE_PORT (HTTPS for custom domains
// on EDGE_TLS_PORT) over the shared database, purges and console cache calls over REDIS_URL,
// metrics and probes on METRICS_PORT. Run as many as needed behind a load balancer; with
// EDGE_WORKERS, this process supervises that many workers sharing its ports (workers.ts).
import cluster from 'node:cluster';
import {
  createLogger,
  drainServer,
  Health,
  listen,
  loadConfig,
  onShutdown,
  openProcessDeps,
  processRegistry,
  startOps,
} from '@ukiyo/server/runtime';
import { createEdge } from './index.ts';
import { answerPrimary, superviseWorkers } from './workers.ts';

const config = loadConfig();
const log = createLogger(config, 'edge');
if (config.EDGE_WORKERS > 1 && cluster.isPrimary) await superviseWorkers(config, log);
else await serve();

async function serve(): Promise<void> {
  // Nothing of the console's own set-up (its jobs, the first administrator).
  const { deps, database } = await openProcessDeps(config, log, async () => {});
  const graceMs = config.SHUTDOWN_GRACE_SECONDS * 1000;
  const edge = await createEdge(deps);

  await Promise.all([
    listen(edge.server, config.EDGE_PORT, config.HOST),
    listen(edge.tlsServer, config.EDGE_TLS_PORT, config.HOST),
  ]);
  const registry = processRegistry('edge', [edge.metrics]);
  const health = new Health().include('edge', edge.health);
  // A worker's metrics and probes are answered by its primary's METRICS_PORT.
  const ops = cluster.isWorker ? null : await startOps(registry, health, config.METRICS_PORT, config.HOST);
  if (cluster.isWorker) answerPrimary(registry, health);
  log.info(
    {
      port: config.EDGE_PORT,
      tlsPort: config.EDGE_TLS_PORT,
      metricsPort: ops?.port,
      redis: Boolean(config.REDIS_URL),
    },
    'image edge listening',
  );

  onShutdown(log, health, graceMs, [
    () => edge.close({ graceMs }),
    async () => ops && drainServer(ops.server, 0),
    () => database.close(),
  ]);
}
