import { Hono } from 'hono';
import { handlers } from '../operations/index.ts';
import type { ServerDeps } from '../operations/context.ts';
import { mountPublicApi } from './public-api.ts';
import { mountConsole } from './static.ts';
import { mountUiApi } from './ui-api.ts';

/** The console's HTTP app: ui-api, then the built SPA. */
export function createServerApp(deps: ServerDeps, options: { consoleDist: string }): Hono {
  const app = new Hono();
  app.use('*', async (c, next) => {
    // Set before the handler builds its response: changing a built one forces a costly copy.
    c.header('X-Content-Type-Options', 'nosniff');
    c.header('Referrer-Policy', 'same-origin');
    c.header('X-Frame-Options', 'DENY');
    await next();
  });
  mountUiApi(app, deps, handlers);
  mountPublicApi(app, deps);
  mountConsole(app, options.consoleDist);
  app.notFound((c) => c.json({ error: 'not found' }, 404));
  app.onError((error, c) => {
    deps.log.error({ err: error }, 'request failed');
    return c.json({ error: 'internal error' }, 500);
  });
  return app;
}
