import { isOperationName } from '@ukiyo/contract';
import { Counter, Histogram, type Registry } from 'prom-client';
import { API_ROUTES } from './api-v1.ts';

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const PUBLIC_API = new Set([
  '/api/cache.lookup',
  '/api/cache.delete',
  '/api/token.info',
  '/api/openapi.json',
]);

/** /api/v1 paths by their template (`/api/v1/origins/{originID}`), never the ids in them. */
const API_V1_PATHS = [...new Set(API_ROUTES.map((route) => `/api/v1${route.path}`))].map((label) => ({
  label,
  pattern: new RegExp(`^${label.replace(/\{\w+\}/g, '[^/]+')}$`),
}));

/** The console server's request metrics, registered on the process's registry. */
export function serverMetrics(registry: Registry) {
  return {
    requests: new Counter({
      name: 'ukiyo_server_http_requests_total',
      help: 'Console server requests answered, by route (ui-api operation, public API call, probe, console) and status',
      labelNames: ['route', 'status'] as const,
      registers: [registry],
    }),
    duration: new Histogram({
      name: 'ukiyo_server_http_request_duration_seconds',
      help: 'Console server request latency, by route',
      labelNames: ['route'] as const,
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    }),
  };
}

/**
 * A bounded label for a request path: never the path itself, which may carry an activation
 * or reset token (console routes) and would grow the series without limit.
 */
export function routeOf(path: string): string {
  if (path.startsWith('/.ui-api/')) {
    const name = path.slice('/.ui-api/'.length);
    return isOperationName(name) ? `ui-api:${name}` : 'ui-api:unknown';
  }
  if (path.startsWith('/api/v1/')) {
    return API_V1_PATHS.find(({ pattern }) => pattern.test(path))?.label ?? '/api/v1/unknown';
  }
  if (path.startsWith('/api/')) return PUBLIC_API.has(path) ? path : '/api/unknown';
  if (path === '/healthz' || path === '/readyz') return path;
  if (path.startsWith('/assets/')) return 'console:asset';
  return 'console';
}
