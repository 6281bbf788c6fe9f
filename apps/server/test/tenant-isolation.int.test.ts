// One tenant editing origins in a loop must not slow another tenant's cache hits: on the
// embedded database the hits once went from 3 ms to ~330 ms while a tenant looped origin.add.
// The attacker (origin-churn.ts, a process of its own like a remote client) is an organization on
// the top plan adding origins as fast as the ui-api answers, and each edit reloads the edge in
// this process at once, as `npm start` does. The bar is 30 s (the bench,
// `npm run bench -- tenant-isolation`); CI runs TENANT_ISOLATION_SECONDS (15) of it.
import type { Server } from 'node:http';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve } from '@hono/node-server';
import { OriginKind, Permission } from '@ukiyo/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Edge } from '@ukiyo/edge';
import { ORIGIN_CHANGES } from '../src/console-server.ts';
import { createServerApp } from '../src/index.ts';
import {
  createTenant,
  createTestUser,
  loggedIn,
  startImageServer,
  startTestEdge,
  testServer,
  type TestServer,
} from './harness.ts';
import { churnElsewhere } from './origin-churn.ts';

const SECONDS = Number(process.env.TENANT_ISOLATION_SECONDS ?? 15);
const HIT_P99_MS = 20;

let server: TestServer;
let edge: Edge;
let images: Server;
let consoleServer: ReturnType<typeof serve>;
let consoleUrl: string;

beforeAll(async () => {
  server = await testServer();
  images = await startImageServer({ width: 800, height: 600 }, '#446688');
  edge = await startTestEdge(server);
  await new Promise<void>((resolve) => edge.server.listen(0, '127.0.0.1', resolve));
  // The ui-api wired to this edge as the all-in-one wires it: every origin edit reloads it at once.
  const app = createServerApp(server.deps, {
    consoleDist: join(tmpdir(), 'ukiyo-no-console'),
    afterOperation: (name) => {
      if (ORIGIN_CHANGES.test(name)) void edge.refreshOrigins();
    },
  });
  consoleUrl = await new Promise((resolve) => {
    consoleServer = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) =>
      resolve(`http://127.0.0.1:${info.port}`),
    );
  });
});

afterAll(async () => {
  consoleServer?.close();
  await edge?.close();
  images?.close();
});

async function originAdmin() {
  const tenant = await createTenant(server.deps);
  const { email } = await createTestUser(server.deps, {
    accountId: tenant.accountId,
    permission: Permission.origin,
  });
  return loggedIn(consoleUrl, email);
}

/** One GET of the edge with a chosen Host header (fetch() will not send one), timed. */
function timedGet(host: string, path: string): Promise<{ status: number; cache: unknown; ms: number }> {
  const { port } = edge.server.address() as AddressInfo;
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { host } }, (res) => {
      res.resume();
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          cache: res.headers['x-cache'],
          ms: performance.now() - started,
        }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!;

/** Hits on one warm variant, one after another, until `until` says stop. */
async function timeHits(host: string, until: () => boolean): Promise<number[]> {
  const times: number[] = [];
  while (!until()) {
    const { status, cache, ms } = await timedGet(host, '/w=200/photo.jpg');
    expect([status, cache]).toEqual([200, 'HIT']);
    times.push(ms);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return times.sort((a, b) => a - b);
}

describe('a tenant looping origin edits', () => {
  it(
    `leaves another tenant's cache hits under ${HIT_P99_MS} ms at p99`,
    async () => {
      const imageHost = `127.0.0.1:${(images.address() as AddressInfo).port}`;
      const victim = await originAdmin();
      const added = await victim.call('origin.add', {
        origin: {
          kind: OriginKind.http,
          // The image server sends no Cache-Control: without this, every request is a miss.
          defaultCache: 86400,
          config: { scheme: 'http', host: imageHost, pathPrefix: '', rewriteHost: '' },
        },
      });
      expect(added.status, JSON.stringify(added.body)).toBe(200);
      const victimHost = (added.body.origin as { name: string }).name;
      await edge.refreshOrigins();
      expect((await timedGet(victimHost, '/w=200/photo.jpg')).status).toBe(200);

      const quiet = Date.now() + 3_000;
      const alone = await timeHits(victimHost, () => Date.now() > quiet);

      const attacker = await originAdmin();
      let attacking = true;
      const [attacked, edits] = await Promise.all([
        timeHits(victimHost, () => !attacking),
        churnElsewhere({
          url: consoleUrl,
          cookie: attacker.cookie,
          host: imageHost,
          seconds: SECONDS,
        }).finally(() => (attacking = false)),
      ]);

      const figures = {
        edits,
        editsPerSecond: Math.round(edits / SECONDS),
        aloneP50: percentile(alone, 50),
        aloneP99: percentile(alone, 99),
        attackedP50: percentile(attacked, 50),
        attackedP99: percentile(attacked, 99),
        attackedMax: attacked.at(-1)!,
        hits: attacked.length,
      };
      console.log(
        `tenant isolation (${SECONDS} s): ${JSON.stringify(figures, (_key, value: unknown) =>
          typeof value === 'number' ? Math.round(value * 10) / 10 : value,
        )}`,
      );
      expect(figures.attackedP99).toBeLessThan(HIT_P99_MS);
    },
    (SECONDS + 60) * 1000,
  );
});
