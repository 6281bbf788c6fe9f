import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTenant,
  getFromEdge,
  insertHttpOrigin,
  startTestEdge,
  testServer,
  type TestServer,
} from '../../server/test/harness.ts';
import type { Edge } from '../src/index.ts';
import { fuzzPaths } from './fuzz-urls.ts';

// CI runs a slice; bench/attack.ts runs 100,000 against `npm start`'s process.
const COUNT = Number(process.env.FUZZ_URLS ?? 1_500);
const SEED = Number(process.env.FUZZ_SEED ?? 20261124);

let server: TestServer;
let images: Server;
let edge: Edge;
let host: string;

beforeAll(async () => {
  server = await testServer();
  const photo = await sharp({ create: { width: 320, height: 240, channels: 3, background: '#8a6' } })
    .jpeg()
    .toBuffer();
  const logo = await sharp({ create: { width: 60, height: 30, channels: 4, background: '#f00a' } })
    .png()
    .toBuffer();
  images = createServer((req, res) => {
    const file = { '/photo.jpg': photo, '/logo.png': logo }[req.url ?? ''];
    if (file) res.writeHead(200, { 'content-length': file.length }).end(file);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => images.listen(0, '127.0.0.1', resolve));
  const { organizationIds } = await createTenant(server.deps);
  const imagesHost = `127.0.0.1:${(images.address() as AddressInfo).port}`;
  host = await insertHttpOrigin(server.deps, organizationIds[0]!, imagesHost);
  edge = await startTestEdge(server);
  await new Promise<void>((resolve) => edge.server.listen(0, '127.0.0.1', resolve));
});

afterAll(async () => {
  await edge.close();
  await new Promise((resolve) => images.close(resolve));
});

describe('fuzzed delivery URLs', () => {
  it(`answer ${COUNT} of them with no server error but load shedding`, { timeout: 300_000 }, async () => {
    const paths = fuzzPaths(COUNT, SEED);
    const byStatus = new Map<number, string[]>();
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < paths.length) {
          const path = paths[next++]!;
          const { status: answer } = await getFromEdge(edge, host, path);
          byStatus.set(answer, [...(byStatus.get(answer) ?? []), path]);
        }
      }),
    );
    const failures = [...byStatus].filter(([code]) => code >= 500 && code !== 503);
    expect(
      failures.map(([code, examples]) => [code, examples.slice(0, 5)]),
      `seed ${SEED}`,
    ).toEqual([]);
    // The mix exercised the pipeline, not only the grammar's refusals.
    expect(byStatus.get(200)?.length ?? 0).toBeGreaterThan(COUNT / 20);
    expect(byStatus.get(400)?.length ?? 0).toBeGreaterThan(COUNT / 20);
  });
});
