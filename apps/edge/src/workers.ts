import cluster, { type Worker } from 'node:cluster';
import type { Config } from '@ukiyo/server/runtime';
import { Health, onShutdown, startOps } from '@ukiyo/server/runtime';
import type { Logger } from 'pino';
import { AggregatorRegistry, type Registry } from 'prom-client';

/** A readiness question from the primary and a worker's answer, over the cluster's IPC. */
const READY_ASK = 'ukiyo:edge-ready?';
const READY_ANSWER = 'ukiyo:edge-ready';
const ANSWER_TIMEOUT_MS = 2_000;
const RESTART_DELAY_MS = 1_000;

interface ReadyMessage {
  type: typeof READY_ANSWER;
  id: number;
  status: number;
  body: unknown;
}

/** The registry the primary's METRICS_PORT serves: every worker's metrics, summed. */
class ClusterRegistry extends AggregatorRegistry<'text/plain; version=0.0.4; charset=utf-8'> {
  override metrics(): Promise<string> {
    return this.clusterMetrics();
  }
}

/**
 * EDGE_WORKERS > 1: this process only supervises. It forks the workers, each a whole edge
 * listening on the same ports (the cluster module hands each new connection to the next
 * worker) over the same cache directory (DiskCache is safe to share), and replaces one that
 * dies. Its METRICS_PORT answers for all: /metrics sums the workers' metrics, /readyz is ready
 * when every worker is. SIGTERM is passed on to the workers, which drain as a single edge
 * does; the primary exits when they have.
 */
export async function superviseWorkers(config: Config, log: Logger): Promise<void> {
  // Each worker opens the database: PGlite is one process's alone.
  if (!config.DATABASE_URL) throw new Error('EDGE_WORKERS above 1 needs DATABASE_URL (PostgreSQL)');
  const graceMs = config.SHUTDOWN_GRACE_SECONDS * 1000;
  let stopping = false;
  const fork = () => cluster.fork();
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) return;
    log.error({ worker: worker.process.pid, code, signal }, 'edge worker exited; starting another');
    // A second later: a worker that dies at start (a bad volume, a full disk) is restarted once
    // a second, not in a loop that takes a core.
    setTimeout(() => {
      if (!stopping) fork();
    }, RESTART_DELAY_MS);
  });
  for (let i = 0; i < config.EDGE_WORKERS; i++) fork();

  let asked = 0;
  const askReady = (worker: Worker) =>
    new Promise<ReadyMessage>((resolve, reject) => {
      const id = asked++;
      const timer = setTimeout(() => {
        worker.off('message', listener);
        reject(new Error(`worker ${worker.process.pid} did not answer`));
      }, ANSWER_TIMEOUT_MS);
      const listener = (message: ReadyMessage) => {
        if (message?.type !== READY_ANSWER || message.id !== id) return;
        clearTimeout(timer);
        worker.off('message', listener);
        resolve(message);
      };
      worker.on('message', listener);
      worker.send({ type: READY_ASK, id });
    });
  const health = new Health({
    workers: {
      critical: true,
      async run() {
        const workers = Object.values(cluster.workers ?? {}).filter((worker) => worker !== undefined);
        if (workers.length < config.EDGE_WORKERS)
          throw new Error(`${workers.length} of ${config.EDGE_WORKERS} workers running`);
        const answers = await Promise.all(workers.map(askReady));
        const unready = answers.filter((answer) => answer.status !== 200);
        if (unready.length > 0)
          throw new Error(`${unready.length} workers unready: ${JSON.stringify(unready[0]!.body)}`);
      },
    },
  });
  const ops = await startOps(new ClusterRegistry(), health, config.METRICS_PORT, config.HOST);
  log.info(
    { workers: config.EDGE_WORKERS, port: config.EDGE_PORT, metricsPort: ops.port },
    'image edge workers',
  );
  onShutdown(log, health, graceMs, [
    async () => {
      stopping = true;
      const workers = Object.values(cluster.workers ?? {}).filter((worker) => worker !== undefined);
      await Promise.all(
        workers.map(
          (worker) =>
            new Promise<void>((resolve) => {
              worker.once('exit', () => resolve());
              worker.process.kill('SIGTERM');
            }),
        ),
      );
    },
  ]);
}

/** In a worker: its metrics and readiness answered to the primary instead of on a port. */
export function answerPrimary(registry: Registry, health: Health): void {
  AggregatorRegistry.setRegistries([registry]);
  // Constructing one adds prom-client's listener that answers the primary's metrics requests.
  new AggregatorRegistry();
  process.on('message', (message: { type?: string; id?: number }) => {
    if (message?.type !== READY_ASK) return;
    health
      .probe('/readyz')
      .then(({ status, body }) => process.send?.({ type: READY_ANSWER, id: message.id, status, body }))
      .catch(() => {});
  });
}
