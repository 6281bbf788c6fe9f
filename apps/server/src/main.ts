import { fileURLToPath } from 'node:url';
import { serve } from '@hono/node-server';
import { createEdge } from '@ukiyo/edge';
import {
  bootstrapAdministrator,
  createServerApp,
  createServerDeps,
  ensureDemoOrganization,
  loadConfig,
} from './index.ts';

const CONSOLE_DIST = fileURLToPath(new URL('../../console/dist', import.meta.url));
const SESSION_SWEEP_MS = 10 * 60_000;

const config = loadConfig();
const { deps, database } = await createServerDeps(config);
const admin = await bootstrapAdministrator(deps.db, config);
if (config.DEMO) await ensureDemoOrganization(deps.db);

// The edge first: the console's cache screen and the public cache API reach its cache.
const edge = await createEdge(deps);
deps.cacheControl = edge;
edge.server.listen(config.EDGE_PORT, config.HOST, () => {
  console.log(`Ukiyo image edge: http://{origin name}.${config.EDGE_DOMAIN}:${config.EDGE_PORT}/`);
});
edge.tlsServer.listen(config.EDGE_TLS_PORT, config.HOST, () => {
  console.log(`Ukiyo image edge (HTTPS, custom domains): https://{custom domain}:${config.EDGE_TLS_PORT}/`);
});

const app = createServerApp(deps, { consoleDist: CONSOLE_DIST });
const server = serve({ fetch: app.fetch, port: config.PORT, hostname: config.HOST }, (info) => {
  const url = config.PUBLIC_URL ?? `http://localhost:${info.port}/`;
  const lines = [
    `Ukiyo console: ${url}`,
    `  database: ${database.kind === 'pglite' ? `embedded (${config.DATA_DIR})` : 'PostgreSQL'}`,
  ];
  if (admin?.generatedPassword) {
    lines.push(
      `  first administrator: ${admin.email}`,
      `  password (shown once): ${admin.generatedPassword}`,
    );
  } else if (admin) {
    lines.push(`  first administrator: ${admin.email} (password from BOOTSTRAP_ADMIN_PASSWORD)`);
  }
  console.log(lines.join('\n'));
});

const sweep = setInterval(() => {
  deps.sessions
    .deleteExpired()
    .catch((error: unknown) => deps.log.warn({ err: error }, 'session sweep failed'));
}, SESSION_SWEEP_MS);
sweep.unref();

async function shutdown(signal: string) {
  deps.log.info({ signal }, 'shutting down');
  clearInterval(sweep);
  server.close();
  await edge.close();
  await database.close();
  process.exit(0);
}
process.once('SIGINT', () => void shutdown('SIGINT'));
process.once('SIGTERM', () => void shutdown('SIGTERM'));
