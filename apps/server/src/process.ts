import type { Server as HttpServer } from 'node:http';
import type { AddressInfo, Server } from 'node:net';
import type { Logger } from 'pino';
import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import type { Health } from './http/health.ts';
import { createOpsServer } from './http/ops.ts';

/**
 * The registry a process exposes on METRICS_PORT: Node's own process metrics and the parts'
 * registries (edge, live), every series labelled with the app. The label is set on the merged
 * registry: prom-client's merge keeps no default labels of the registries merged.
 */
export function processRegistry(app: string, parts: Registry[] = []): Registry {
  const own = new Registry();
  collectDefaultMetrics({ register: own, prefix: 'ukiyo_' });
  const registry = Registry.merge([own, ...parts]);
  registry.setDefaultLabels({ app });
  return registry;
}

/** A gauge per [name, help, read]: each read when the registry is scraped. */
export function probeGauges(
  registry: Registry,
  gauges: Array<[name: string, help: string, read: () => number | Promise<number>]>,
): void {
  for (const [name, help, read] of gauges)
    new Gauge({
      name,
      help,
      registers: [registry],
      async collect() {
        this.set(await read());
      },
    });
}

/** Listens and resolves with the port actually bound (0 picks a free one). */
export function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/** The operations listener (metrics, health) on METRICS_PORT. */
export async function startOps(
  registry: Registry,
  health: Health,
  port: number,
  host: string,
): Promise<{ server: HttpServer; port: number }> {
  const server = createOpsServer(registry, health);
  return { server, port: await listen(server, port, host) };
}

/**
 * SIGTERM / SIGINT: readiness turns 503 at once (the load balancer stops sending work), then
 * the steps run in order (drain listeners, flush usage, close Redis and the database) and the
 * process exits 0. Should a step hang, the process exits 1 after the grace period plus 10 s.
 */
export function onShutdown(
  log: Logger,
  health: Health,
  graceMs: number,
  steps: ReadonlyArray<() => Promise<unknown>>,
): void {
  let started = false;
  const shutdown = async (signal: string) => {
    if (started) return;
    started = true;
    health.shuttingDown = true;
    log.info({ signal, graceMs }, 'shutting down');
    setTimeout(() => {
      log.error('shutdown did not finish in time');
      process.exit(1);
    }, graceMs + 10_000).unref();
    for (const step of steps) {
      try {
        await step();
      } catch (error) {
        log.warn({ err: error }, 'shutdown step failed');
      }
    }
    log.info('stopped');
    process.exit(0);
  };
  process.once('SIGINT', () => void shutdown('SIGINT'));
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
}
