// Debian's nginx as an origin: a web server nobody on this team wrote, with its own ETag,
// Last-Modified and conditional requests, serving a directory of files.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const nginxInstalled = spawnSync('sh', ['-c', 'command -v nginx']).status === 0;

export interface NginxOrigin {
  port: number;
  /** Writes a file the origin serves at `/{name}`. */
  put(name: string, body: Buffer): void;
  /**
   * Status and If-None-Match (if any) of each request but the start-up probe's, once there are
   * `count`: nginx logs a request after it has answered, so its line may follow the answer.
   */
  requests(count: number): Promise<string[]>;
  close(): void;
}

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

export async function startNginxOrigin(): Promise<NginxOrigin> {
  const prefix = mkdtempSync(join(tmpdir(), 'ukiyo-nginx-origin-'));
  const root = join(prefix, 'root');
  mkdirSync(root);
  // Run as root, nginx's workers read as an unprivileged user.
  chmodSync(prefix, 0o755);
  const port = await freePort();
  const log = join(prefix, 'requests.log');
  const conf = join(prefix, 'nginx.conf');
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map(
    (kind) => `${kind}_temp_path ${join(prefix, kind)};`,
  );
  writeFileSync(
    conf,
    `daemon off;
worker_processes 1;
pid ${join(prefix, 'nginx.pid')};
error_log stderr crit;
events { worker_connections 64; }
http {
  log_format requests escape=none '$status $http_if_none_match';
  access_log ${log} requests;
  ${temp.join('\n  ')}
  types { image/jpeg jpg; image/png png; }
  server { listen 127.0.0.1:${port}; root ${root}; }
}
`,
  );
  const nginx: ChildProcess = spawn('nginx', ['-p', prefix, '-e', 'stderr', '-c', conf], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  await waitForPort(port);
  return {
    port,
    put: (name, body) => writeFileSync(join(root, name), body, { mode: 0o644 }),
    requests: async (count) => {
      const logged = () =>
        existsSync(log)
          ? readFileSync(log, 'utf8')
              .trim()
              .split('\n')
              .slice(1) // not the probe's line
              .map((line) => line.trimEnd())
          : [];
      for (let waited = 0; logged().length < count && waited < 5_000; waited += 20) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return logged();
    },
    close: () => nginx.kill('SIGQUIT'),
  };
}

/** Resolves once nginx answers: a 403 (the root has no index), the first line of its log. */
async function waitForPort(port: number): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const open = await fetch(`http://127.0.0.1:${port}/`).then(
      () => true,
      () => false,
    );
    if (open) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`nginx did not listen on ${port}`);
}
