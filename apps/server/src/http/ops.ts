import { createServer, type Server } from 'node:http';
import type { Registry } from 'prom-client';
import type { Health } from './health.ts';

/**
 * The operations listener of one process (METRICS_PORT): `GET /metrics` in Prometheus' text
 * format, `/healthz` and `/readyz`. Plain node:http, apart from the public listeners, so a
 * scrape never queues behind customer traffic and the port can stay on a private network.
 */
export function createOpsServer(registry: Registry, health: Health): Server {
  return createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const answer = (status: number, type: string, body: string) =>
      res.writeHead(status, { 'Content-Type': type, 'Cache-Control': 'no-store' }).end(body);
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return answer(405, 'text/plain', 'method not allowed\n');
    if (path === '/metrics') {
      registry.metrics().then(
        (text) => answer(200, registry.contentType, text),
        () => answer(500, 'text/plain', 'metrics failed\n'),
      );
      return;
    }
    if (path === '/healthz' || path === '/readyz') {
      health.probe(path).then(
        ({ status, body }) => answer(status, 'application/json', JSON.stringify(body)),
        () => answer(500, 'text/plain', 'health check failed\n'),
      );
      return;
    }
    answer(404, 'text/plain', 'not found\n');
  });
}
