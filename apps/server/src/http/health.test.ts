import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { countedHandler, drainServer } from './drain.ts';
import { diskCheck, Health } from './health.ts';
import { routeOf } from './metrics.ts';

const ok = { critical: true, run: async () => {} };
const broken = (critical: boolean) => ({
  critical,
  run: async () => {
    throw new Error('down');
  },
});

describe('Health', () => {
  it('is ready with every check passing, degraded with a non-critical failure, unready with a critical one', async () => {
    expect((await new Health({ a: ok }).report()).status).toBe(200);
    const degraded = await new Health({ a: ok, redis: broken(false) }).report();
    expect(degraded).toMatchObject({
      status: 200,
      body: { status: 'degraded', checks: { redis: { ok: false, error: 'down' } } },
    });
    const unready = await new Health({ database: broken(true), redis: broken(false) }).report();
    expect(unready).toMatchObject({ status: 503, body: { status: 'unready' } });
  });

  it('turns unready while shutting down, and liveness stays up', async () => {
    const health = new Health({ a: ok });
    health.shuttingDown = true;
    expect(await health.probe('/readyz')).toMatchObject({ status: 503, body: { status: 'shutting down' } });
    expect(await health.probe('/healthz')).toEqual({ status: 200, body: { status: 'alive' } });
  });

  it('times out a check that hangs', async () => {
    const hanging = { critical: true, run: () => new Promise<void>(() => {}) };
    const started = Date.now();
    const report = await new Health({ hanging }).report();
    expect(report.status).toBe(503);
    expect(Date.now() - started).toBeLessThan(5_000);
  }, 10_000);

  it('fails the disk check below the free-space floor', async () => {
    await expect(diskCheck('/tmp', 0).run()).resolves.toBeUndefined();
    await expect(diskCheck('/tmp', Number.MAX_SAFE_INTEGER).run()).rejects.toThrow(/MiB free/);
  });
});

describe('drainServer', () => {
  it('lets a request in flight finish and refuses new connections', async () => {
    const server = createServer((_req, res) => setTimeout(() => res.end('done'), 300));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const answer = new Promise<string>((resolve, reject) => {
      request({ port, host: '127.0.0.1', agent: false }, (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => resolve(body));
      })
        .on('error', reject)
        .end();
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const drained = drainServer(server, 5_000);
    expect(await answer).toBe('done');
    await drained;
    expect(server.listening).toBe(false);
  });
});

describe('countedHandler', () => {
  it('settles once every call has returned, or after the timeout', async () => {
    let finish!: () => void;
    const { handler, settled } = countedHandler(
      () => new Promise<Response>((resolve) => (finish = () => resolve(new Response('late')))),
    );
    await settled(0);
    const answer = handler();
    let done = false;
    const waiting = settled(5_000).then(() => (done = true));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(done).toBe(false);
    finish();
    await waiting;
    expect(await (await answer).text()).toBe('late');

    void handler();
    const started = performance.now();
    await settled(50);
    expect(performance.now() - started).toBeGreaterThanOrEqual(45);
  });
});

describe('routeOf', () => {
  it('labels requests by route, never by a path that may carry a token', () => {
    expect(routeOf('/.ui-api/auth.login')).toBe('ui-api:auth.login');
    expect(routeOf('/.ui-api/whatever')).toBe('ui-api:unknown');
    expect(routeOf('/api/cache.delete')).toBe('/api/cache.delete');
    expect(routeOf('/api/x/y')).toBe('/api/unknown');
    expect(routeOf('/api/v1/origins/42')).toBe('/api/v1/origins/{originID}');
    expect(routeOf('/api/v1/origins/42/nope')).toBe('/api/v1/unknown');
    expect(routeOf('/activate/secret-token-123')).toBe('console');
    expect(routeOf('/assets/index-abc.js')).toBe('console:asset');
  });
});
