import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OriginKind, Permission } from '@ukiyo/contract';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEdge, type Edge } from '@ukiyo/edge';
import { createTenant, createTestUser, loggedIn, testServer, type Client } from './harness.ts';
import { get } from './processes.ts';

// Origin faults at the edge: slow and failing origins, with and without a cached copy.
const TIMEOUT_MS = 600;
let edge: Edge;
let origin: Server;
let mode: 'ok' | 'slow' | 'error' = 'ok';
let client: Client;
let port: number;

async function addOrigin(defaultCache: number): Promise<string> {
  const { port: originPort } = origin.address() as AddressInfo;
  const added = await client.call('origin.add', {
    origin: {
      kind: OriginKind.http,
      defaultCache,
      config: { scheme: 'http', host: `127.0.0.1:${originPort}`, pathPrefix: '', rewriteHost: '' },
    },
  });
  expect(added.status, JSON.stringify(added.body)).toBe(200);
  await edge.refreshOrigins();
  return (added.body.origin as { name: string }).name;
}

beforeAll(async () => {
  const photo = await sharp({ create: { width: 400, height: 300, channels: 3, background: '#804020' } })
    .jpeg()
    .toBuffer();
  origin = createServer((_req, res) => {
    if (mode === 'error') return res.writeHead(500).end('broken');
    // Slow: longer than the edge's timeout, then an answer nobody waits for any more.
    setTimeout(
      () => res.writeHead(200, { 'content-type': 'image/jpeg' }).end(photo),
      mode === 'slow' ? 3 * TIMEOUT_MS : 0,
    );
  });
  await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
  const server = await testServer();
  const tenant = await createTenant(server.deps);
  const { email } = await createTestUser(server.deps, {
    accountId: tenant.accountId,
    permission: Permission.origin,
  });
  client = await loggedIn(server.baseUrl, email);
  edge = await createEdge(
    { ...server.deps, config: { ...server.deps.config, ALLOW_PRIVATE_ORIGINS: true } },
    {
      cacheDir: mkdtempSync(join(tmpdir(), 'ukiyo-edge-')),
      originPollMs: 60_000,
      meteringFlushMs: 60_000,
      originTimeoutMs: TIMEOUT_MS,
    },
  );
  await new Promise<void>((resolve) => edge.server.listen(0, '127.0.0.1', resolve));
  port = (edge.server.address() as AddressInfo).port;
});

afterAll(async () => {
  mode = 'ok';
  await edge?.close();
  origin?.closeAllConnections();
  await new Promise((resolve) => origin?.close(resolve));
});

describe('origin faults', () => {
  it('a slow origin: 504 after the timeout without a copy, the stale copy with one', async () => {
    // defaultCache 0: every copy is stale at once, so each request asks the origin again.
    const host = await addOrigin(0);
    mode = 'ok';
    expect((await get(port, host, '/w=100/slow.jpg')).status).toBe(200);
    mode = 'slow';
    let started = performance.now();
    const stale = await get(port, host, '/w=100/slow.jpg');
    const staleMs = performance.now() - started;
    expect(stale.status).toBe(200);
    expect(stale.headers['x-cache']).toBe('STALE');
    expect(stale.headers['cache-control']).toBe('no-cache');
    expect((await sharp(stale.body).metadata()).width).toBe(100);
    started = performance.now();
    const timedOut = await get(port, host, '/w=101/slow.jpg');
    const timeoutMs = performance.now() - started;
    expect(timedOut.status).toBe(504);
    // Answered at the timeout, not when the origin finally answers (3x later); loose margins
    // for a busy machine.
    expect(timeoutMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
    expect(timeoutMs).toBeLessThan(3 * TIMEOUT_MS);
    expect(staleMs).toBeLessThan(3 * TIMEOUT_MS);
    mode = 'ok';
  });

  it('an origin answering 500: the stale copy with one, 502 without', async () => {
    const host = await addOrigin(0);
    mode = 'ok';
    expect((await get(port, host, '/w=90/broken.jpg')).status).toBe(200);
    mode = 'error';
    const stale = await get(port, host, '/w=90/broken.jpg');
    expect(stale.status).toBe(200);
    expect(stale.headers['x-cache']).toBe('STALE');
    expect((await get(port, host, '/w=91/broken.jpg')).status).toBe(502);
    mode = 'ok';
    const fresh = await get(port, host, '/w=90/broken.jpg');
    expect(fresh.headers['x-cache']).toBe('MISS');
  });

  it('counts the faults in the metrics', async () => {
    const text = await edge.metrics.metrics();
    expect(text).toMatch(
      /ukiyo_edge_origin_fetch_duration_seconds_count\{kind="http",outcome="timeout"\} [1-9]/,
    );
    expect(text).toMatch(/ukiyo_edge_requests_total\{status="504",cache="-"\} [1-9]/);
    expect(text).toMatch(/ukiyo_edge_requests_total\{status="200",cache="STALE"\} [1-9]/);
  });
});
