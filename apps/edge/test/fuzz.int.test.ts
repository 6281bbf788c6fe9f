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
import { serveFuzzImages } from './fuzz-images.ts';
import { fuzzPaths } from './fuzz-urls.ts';

// CI runs a slice; bench/attack.ts runs 100,000 against `npm start`'s process.
const COUNT = Number(process.env.FUZZ_URLS ?? 1_500);
const SEED = Number(process.env.FUZZ_SEED ?? 20261124);

let server: TestServer;
let images: Awaited<ReturnType<typeof serveFuzzImages>>;
let edge: Edge;
let host: string;

beforeAll(async () => {
  server = await testServer();
  images = await serveFuzzImages();
  const { organizationIds } = await createTenant(server.deps);
  const imagesHost = `127.0.0.1:${images.port}`;
  host = await insertHttpOrigin(server.deps, organizationIds[0]!, imagesHost);
  edge = await startTestEdge(server);
  await new Promise<void>((resolve) => edge.server.listen(0, '127.0.0.1', resolve));
});

afterAll(async () => {
  await edge.close();
  await images.close();
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
