import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTenant,
  getFromEdge,
  insertHttpOrigin,
  startImageServer,
  startTestEdge,
  testServer,
  type TestServer,
} from '../../server/test/harness.ts';
import type { Edge, EdgeOptions } from '../src/index.ts';

const get = async (edge: Edge, host: string, path: string) => {
  const answer = await getFromEdge(edge, host, path);
  return { ...answer, body: answer.body.toString('latin1') };
};

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? 0;
};

let server: TestServer;
let images: Server;
const edges: Edge[] = [];

/** An HTTP origin of a new organization over the loopback image server. */
async function originOfNewTenant(): Promise<string> {
  const { organizationIds } = await createTenant(server.deps);
  const { port } = images.address() as AddressInfo;
  return insertHttpOrigin(server.deps, organizationIds[0]!, `127.0.0.1:${port}`);
}

/** An edge as `npm start` configures it, except where a test narrows an option. */
async function startEdge(options: Partial<EdgeOptions> = {}): Promise<Edge> {
  const edge = await startTestEdge(server, options);
  await new Promise<void>((resolve) => edge.server.listen(0, '127.0.0.1', resolve));
  edges.push(edge);
  return edge;
}

beforeAll(async () => {
  server = await testServer();
  // The size of the photo the attack was first seen on.
  images = await startImageServer({ width: 1200, height: 800 }, '#5a7d9a');
});

afterAll(async () => {
  await Promise.all(edges.map((edge) => edge.close()));
  await new Promise((resolve) => images.close(resolve));
});

describe('an edge under expensive conversions', () => {
  it('refuses a parameter out of its range with a 400 naming it', async () => {
    const edge = await startEdge();
    const attacker = await originOfNewTenant();
    await edge.refreshOrigins();
    const answer = await get(edge, attacker, '/blur=1000x1000/photo.jpg');
    expect(answer.status).toBe(400);
    expect(answer.body).toBe('blur sigma: must be at most 100\n');
    expect(answer.headers['x-content-type-options']).toBe('nosniff');
  });

  it('keeps cache hits fast and /readyz 200 while 8 of the costliest allowed conversions run', async () => {
    // Hits read from disk, through libuv's threads: the ones transforms must not take.
    const edge = await startEdge({ memoryCacheBytes: 0 });
    const [attacker, victim] = [await originOfNewTenant(), await originOfNewTenant()];
    await edge.refreshOrigins();
    expect((await get(edge, victim, '/w=200/photo.jpg')).status).toBe(200);
    expect((await get(edge, victim, '/w=200/photo.jpg')).headers['x-cache']).toBe('HIT');

    let attacking = true;
    let costly = 0;
    const attackerStatuses = new Map<number, number>();
    // Just inside the default budget: WebP at ~6 MP with the strongest blur and sharpening.
    const attack = Array.from({ length: 8 }, async (_, slot) => {
      for (let round = 0; attacking; round++) {
        const width = 2600 + slot * 20 + round;
        const path = `/w=${width},h=2200,blur=9x100,unsharp=9x10,contrast=150,f=webp/photo.jpg`;
        const answer = await get(edge, attacker, path);
        attackerStatuses.set(answer.status, (attackerStatuses.get(answer.status) ?? 0) + 1);
        if (answer.status === 200) costly++;
      }
    });
    await new Promise((resolve) => setTimeout(resolve, 500));

    const hits: number[] = [];
    const ready: number[] = [];
    const until = Date.now() + 6_000;
    while (Date.now() < until) {
      const hit = await get(edge, victim, '/w=200/photo.jpg');
      expect(hit.headers['x-cache']).toBe('HIT');
      hits.push(hit.ms);
      if (hits.length % 10 === 0) ready.push((await get(edge, 'localhost', '/readyz')).status);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    attacking = false;
    await Promise.all(attack);

    expect(costly, `attacker answers: ${JSON.stringify([...attackerStatuses])}`).toBeGreaterThan(0);
    expect([...attackerStatuses.keys()].every((status) => status === 200 || status === 503)).toBe(true);
    expect(new Set(ready)).toEqual(new Set([200]));
    expect(percentile(hits, 99), `hit p50 ${percentile(hits, 50).toFixed(1)} ms`).toBeLessThan(50);
  });

  it('refuses a conversion over the cost budget with 422', async () => {
    const edge = await startEdge();
    const attacker = await originOfNewTenant();
    await edge.refreshOrigins();
    const answer = await get(edge, attacker, '/w=4000,h=3000,f=gif/photo.jpg');
    expect(answer.status).toBe(422);
    expect(answer.body).toMatch(/^the conversion would cost \d+ units, more than the 3000 allowed/);
  });

  it('answers 503 with Retry-After past the transform deadline', async () => {
    const edge = await startEdge({ transformBudget: 0, transformTimeoutMs: 1_000 });
    const attacker = await originOfNewTenant();
    await edge.refreshOrigins();
    const started = Date.now();
    const answer = await get(edge, attacker, '/w=8000,h=6000,blur=9x100,unsharp=9x10,f=png/photo.jpg');
    expect(answer.status).toBe(503);
    expect(answer.headers['retry-after']).toBe('1');
    expect(answer.body).toBe('the conversion took too long\n');
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('sheds conversions past its waiting room with 503 and Retry-After', async () => {
    const edge = await startEdge({ transformConcurrency: 1, transformQueue: 2, transformWaitMs: 10_000 });
    const [attacker, victim] = [await originOfNewTenant(), await originOfNewTenant()];
    await edge.refreshOrigins();
    expect((await get(edge, victim, '/w=100/photo.jpg')).status).toBe(200);
    const flood = await Promise.all(
      Array.from({ length: 6 }, (_, i) => get(edge, attacker, `/w=${3000 + i},h=2000,blur=1x60/photo.jpg`)),
    );
    const statuses = flood.map((answer) => answer.status).sort();
    // One runs, one waits (half of the room for one organization), the rest are shed.
    expect(statuses).toEqual([200, 200, 503, 503, 503, 503]);
    const shed = flood.find((answer) => answer.status === 503)!;
    expect(shed.headers['retry-after']).toBe('1');
    expect(shed.body).toMatch(/conversions are waiting/);
    expect((await get(edge, victim, '/w=100/photo.jpg')).headers['x-cache']).toBe('HIT');
  });
});
