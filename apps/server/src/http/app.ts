import { Hono } from 'hono';
import { requestId } from 'hono/request-id';
import { Registry } from 'prom-client';
import { handlers } from '../operations/index.ts';
import type { ServerDeps } from '../operations/context.ts';
import { mountApiV1 } from './api-v1.ts';
import type { Health } from './health.ts';
import { routeOf, serverMetrics } from './metrics.ts';
import { mountOpenApi } from './openapi.ts';
import { mountPublicApi } from './public-api.ts';
import { isSecureRequest } from './request.ts';
import { contentSecurityPolicy } from './security.ts';
import { mountConsole } from './static.ts';
import { mountUiApi, type AfterOperation } from './ui-api.ts';

export interface ServerAppOptions {
  consoleDist: string;
  /** The process's Prometheus registry; a private one when not given. */
  metrics?: Registry;
  /** Answers /healthz and /readyz on the console port too. */
  health?: Health;
  /** Called after every successful ui-api or /api/v1 operation (the fleet tells edges of origin changes). */
  afterOperation?: AfterOperation;
}

/** The console's HTTP app: probes, ui-api, public API, then the built SPA. */
export function createServerApp(deps: ServerDeps, options: ServerAppOptions): Hono {
  const app = new Hono();
  const metrics = serverMetrics(options.metrics ?? new Registry());
  let csp = contentSecurityPolicy([]);
  app.use('*', requestId());
  app.use('*', async (c, next) => {
    // Set before the handler builds its response: changing a built one forces a costly copy.
    c.header('X-Content-Type-Options', 'nosniff');
    c.header('Referrer-Policy', 'same-origin');
    c.header('X-Frame-Options', 'DENY');
    c.header('Cross-Origin-Opener-Policy', 'same-origin');
    c.header('Cross-Origin-Resource-Policy', 'same-origin');
    c.header('Permissions-Policy', 'geolocation=(), payment=(), usb=()');
    c.header('Content-Security-Policy', csp);
    if (isSecureRequest(c, deps.config)) c.header('Strict-Transport-Security', 'max-age=31536000');
    const started = performance.now();
    await next();
    const seconds = (performance.now() - started) / 1000;
    const route = routeOf(c.req.path);
    const status = c.res.status;
    metrics.requests.inc({ route, status });
    metrics.duration.observe({ route }, seconds);
    if (deps.log.isLevelEnabled('info')) {
      // The route, never the path: console paths may carry activation or reset tokens.
      deps.log.info(
        {
          reqId: c.get('requestId'),
          method: c.req.method,
          route,
          status,
          ms: Math.round(seconds * 10000) / 10,
        },
        'request',
      );
    }
  });
  const health = options.health;
  if (health) {
    app.get('/healthz', async (c) => {
      const { status, body } = await health.probe('/healthz');
      return c.json(body as object, status as 200);
    });
    app.get('/readyz', async (c) => {
      const { status, body } = await health.probe('/readyz');
      c.header('Cache-Control', 'no-store');
      return c.json(body as object, status as 200 | 503);
    });
  }
  mountUiApi(app, deps, handlers, options.afterOperation);
  mountApiV1(app, deps, handlers, options.afterOperation);
  mountPublicApi(app, deps);
  mountOpenApi(app, deps.config);
  csp = contentSecurityPolicy(mountConsole(app, options.consoleDist));
  app.notFound((c) => c.json({ error: 'not found' }, 404));
  app.onError((error, c) => {
    deps.log.error({ err: error, reqId: c.get('requestId') }, 'request failed');
    return c.json({ error: 'internal error' }, 500);
  });
  return app;
}
