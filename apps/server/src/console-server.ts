import { fileURLToPath } from 'node:url';
import { serve } from '@hono/node-server';
import type { Server } from 'node:http';
import type { Registry } from 'prom-client';
import type { Config } from './config.ts';
import type { DatabaseHandle } from './db/database.ts';
import { createServerApp } from './http/app.ts';
import { countedHandler, drainServer } from './http/drain.ts';
import { databaseCheck, diskCheck, type Health } from './http/health.ts';
import type { ServerDeps } from './operations/context.ts';
import type { BootstrappedAdmin } from './services/administrator.ts';

const CONSOLE_DIST = fileURLToPath(new URL('../../console/dist', import.meta.url));
const SESSION_SWEEP_MS = 10 * 60_000;

/** Origin edits the edges should load now rather than at their next poll. */
export const ORIGIN_CHANGES =
  /^origin\.(add|copy|update|delete|rotate_signing_secret|upload_tls_certificate)$/;

/**
 * The console server of a process (all-in-one or alone): the Hono app on PORT, readiness
 * checks of its database and disk, and the expired-session sweep.
 */
export function startConsoleServer(
  deps: ServerDeps,
  database: DatabaseHandle,
  options: {
    registry: Registry;
    health: Health;
    /** Tells the edges of an origin edit, so they load it now rather than at their next poll. */
    originsChanged?: () => Promise<unknown>;
  },
  onListening: (port: number) => void,
): {
  server: Server;
  /**
   * Stops the sweep, drains the server (see drainServer) and waits, within `graceMs`, for
   * handlers still running for clients already gone: then the database may close.
   */
  stop(graceMs: number): Promise<void>;
} {
  const { config } = deps;
  // This process keeps sessions, tokens and origin lists in memory: it hears of their changes.
  deps.invalidations.start();
  options.health.add('database', databaseCheck(deps.db));
  // Embedded PGlite lives in DATA_DIR; with PostgreSQL it holds only the generated secret key.
  options.health.add(
    'disk',
    diskCheck(config.DATA_DIR, config.READY_MIN_FREE_MB * 1024 ** 2, database.kind === 'pglite'),
  );
  const app = createServerApp(deps, {
    consoleDist: CONSOLE_DIST,
    metrics: options.registry,
    health: options.health,
    afterOperation: (name) => {
      if (options.originsChanged && ORIGIN_CHANGES.test(name))
        options
          .originsChanged()
          .catch((error: unknown) =>
            deps.log.warn({ err: error }, 'origin change not passed on to the edges'),
          );
    },
  });
  const requests = countedHandler(app.fetch);
  const server = serve({ fetch: requests.handler, port: config.PORT, hostname: config.HOST }, (info) =>
    onListening(info.port),
  ) as Server;
  const sweep = setInterval(() => {
    deps.sessions
      .deleteExpired()
      .catch((error: unknown) => deps.log.warn({ err: error }, 'session sweep failed'));
  }, SESSION_SWEEP_MS);
  sweep.unref();
  return {
    server,
    stop: async (graceMs) => {
      clearInterval(sweep);
      await drainServer(server, graceMs);
      await requests.settled(graceMs);
    },
  };
}

/** Where to log in, and the first administrator when this process created it. */
export function consoleBanner(
  config: Config,
  port: number,
  database: DatabaseHandle,
  admin: BootstrappedAdmin | undefined,
): string[] {
  const lines = [
    `Ukiyo console: ${config.PUBLIC_URL ?? `http://localhost:${port}/`}`,
    `  database: ${database.kind === 'pglite' ? `embedded (${config.DATA_DIR})` : 'PostgreSQL'}`,
  ];
  if (admin?.generatedPassword)
    lines.push(
      `  first administrator: ${admin.email}`,
      `  password (shown once): ${admin.generatedPassword}`,
    );
  else if (admin)
    lines.push(`  first administrator: ${admin.email} (password from BOOTSTRAP_ADMIN_PASSWORD)`);
  return lines;
}
