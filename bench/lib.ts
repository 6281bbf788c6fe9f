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
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      // As `npm start` runs it: fewer glibc arenas keep libvips' threads from inflating RSS.
      MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? '2',
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
