import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync, existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Starts `npm start`'s server process on a fresh DATA_DIR and waits until it answers. */
export async function startServer(
  env: Record<string, string>,
): Promise<{ url: string; process: ChildProcess }> {
  const port = 20000 + Math.floor(Math.random() * 20000);
  const child = spawn(process.execPath, ['--import', 'tsx', 'apps/server/src/main.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATA_DIR: mkdtempSync(join(tmpdir(), 'ukiyo-bench-')),
      PORT: String(port),
      // The edge's other listeners, on free ports of their own.
      EDGE_PORT: String(port + 1),
      EDGE_TLS_PORT: String(port + 2),
      METRICS_PORT: String(port + 3),
      LIVE_PORT: String(port + 4),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      // As `npm start` runs it: fewer glibc arenas keep libvips' threads from inflating RSS.
      MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? '2',
      // As `npm start` runs it: four transforms and the threads the edge keeps beside them.
      UV_THREADPOOL_SIZE: process.env.UV_THREADPOOL_SIZE ?? '8',
      ...env,
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  for (let attempt = 0; attempt < 300; attempt++) {
    try {
      const response = await fetch(`${url}/.ui-api/user.whoami?api-version=2.29`, {
        method: 'POST',
        headers: { 'X-Requested-With': 'XMLHttpRequest' },
      });
      if (response.ok) return { url, process: child };
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  child.kill();
  throw new Error('server did not start within 30 s');
}

/** Prints figures beside the committed baseline and stores this run under bench/results. */
export function report(name: string, figures: Record<string, number>, targets: Record<string, string>): void {
  const baselinePath = join(ROOT, 'bench/baselines', `${name}.json`);
  const baseline: Record<string, number> = existsSync(baselinePath)
    ? JSON.parse(readFileSync(baselinePath, 'utf8'))
    : {};
  console.log(`\n${name}`);
  for (const [key, value] of Object.entries(figures)) {
    const base = baseline[key];
    const ratio = base ? ` (baseline ${base}, x${(value / base).toFixed(2)})` : '';
    console.log(`  ${key}: ${value}${ratio}${targets[key] ? `  target ${targets[key]}` : ''}`);
  }
  mkdirSync(join(ROOT, 'bench/results'), { recursive: true });
  writeFileSync(join(ROOT, 'bench/results', `${name}.json`), `${JSON.stringify(figures, null, 2)}\n`);
}

/** One ui-api call with a session cookie; a refusal throws. Returns the answer and the cookie. */
export async function call(url: string, cookie: string, operation: string, body: unknown) {
  const response = await fetch(`${url}/.ui-api/${operation}?api-version=2.29`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Requested-With': 'XMLHttpRequest', Cookie: cookie },
    body: JSON.stringify(body),
  });
  const setCookie = response.headers.getSetCookie().at(-1)?.split(';')[0];
  const json = (await response.json()) as Record<string, unknown>;
  if (!response.ok) throw new Error(`${operation}: ${JSON.stringify(json)}`);
  return { json, cookie: setCookie ?? cookie };
}

/**
 * An HTTP origin made through the ui-api as the bootstrap administrator (in the first
 * organization), once `isServed(host)` says the edge serves it. Returns its host name.
 */
export async function createOrigin(
  serverUrl: string,
  admin: { email: string; password: string },
  config: { host: string; pathPrefix: string },
  isServed: (host: string) => Promise<boolean>,
): Promise<string> {
  let { cookie } = await call(serverUrl, '', 'auth.login', {
    emailAddress: admin.email,
    password: admin.password,
  });
  const { organizations } = (await call(serverUrl, cookie, 'admin.list_organizations', {})).json as {
    organizations: Array<{ organizationID: number }>;
  };
  ({ cookie } = await call(serverUrl, cookie, 'auth.change_organization', {
    organizationID: organizations[0]!.organizationID,
  }));
  const added = await call(serverUrl, cookie, 'origin.add', {
    origin: { kind: 0, defaultCache: 86400, config: { scheme: 'http', rewriteHost: '', ...config } },
  });
  const host = (added.json.origin as { name: string }).name;
  for (let attempt = 0; !(await isServed(host)); attempt++) {
    if (attempt > 100) throw new Error('the edge did not load the origin');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return host;
}
