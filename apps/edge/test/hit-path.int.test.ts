// The hit path must answer exactly as the full path does (issue 21). Two edges share one cache
// directory: `hot` has seen each URL once already, so it answers from memory where it can;
// `full` has its hit path off and reads the same variants from disk. For random URLs (valid
// ones and the fuzzer's) and random request headers (Accept, If-None-Match, signature, client
// address, method, written in several styles) on a plain, a signed and an ACL-guarded origin,
// the answers must match. `hot` reads repeated hits off the socket (src/hot-socket.ts).
import { mkdtempSync } from 'node:fs';
import { request, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OriginKind, Permission } from '@ukiyo/contract';
import { formatExpires, signPath } from '@ukiyo/imaging';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTenant,
  createTestUser,
  loggedIn,
  startTestEdge,
  testServer,
  type Client,
} from '../../server/test/harness.ts';
import type { Edge } from '../src/index.ts';
import { serveFuzzImages } from './fuzz-images.ts';
import { fuzzPaths } from './fuzz-urls.ts';

const RUNS = Number(process.env.HIT_PATH_RUNS ?? 250);
const SEED = Number(process.env.HIT_PATH_SEED ?? 20261125);
const SECRET = 'hit-path-secret';

let images: Awaited<ReturnType<typeof serveFuzzImages>>;
let hot: Edge;
let full: Edge;
const hosts: Record<'plain' | 'signed' | 'guarded', string> = { plain: '', signed: '', guarded: '' };

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/**
 * How the request's head is written: the hot path reads heads off the socket itself, so names
 * in capitals, padded values, a header twice and `Connection: close` must mean what they mean
 * to node:http.
 */
type HeadStyle = 'plain' | 'capitals' | 'padded' | 'accept-twice' | 'close';

function rawHeaders(headers: Record<string, string>, style: HeadStyle): string[] {
  const pairs = Object.entries(headers).map(([name, value]) => [
    style === 'capitals' ? name.toUpperCase() : name,
    style === 'padded' ? ` \t${value}\t ` : value,
  ]);
  if (style === 'accept-twice') pairs.push(['Accept', 'image/png']);
  if (style === 'close') pairs.push(['Connection', 'close']);
  return pairs.flat();
}

function ask(
  edge: Edge,
  host: string,
  path: string,
  {
    method = 'GET',
    client = '127.0.0.1',
    headers = {} as Record<string, string>,
    style = 'plain' as HeadStyle,
  } = {},
): Promise<Answer> {
  const { port } = edge.server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method,
        localAddress: client,
        headers: rawHeaders({ host, ...headers }, style),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** What must be equal: all but the per-request id and the clock (compared within a second). */
function comparable(answer: Answer) {
  const {
    'x-request-id': _id,
    date: _date,
    expires: _expires,
    connection: _c,
    'keep-alive': _k,
    ...headers
  } = answer.headers;
  const maxAge = /max-age=(\d+)/.exec(String(headers['cache-control']));
  if (maxAge) headers['cache-control'] = String(headers['cache-control']).replace(maxAge[0], 'max-age=N');
  return {
    status: answer.status,
    headers,
    body: answer.body.toString('base64'),
    maxAge: Number(maxAge?.[1] ?? -1),
  };
}

async function addOrigin(client: Client, port: number, overrides: Record<string, unknown>): Promise<string> {
  const added = await client.call('origin.add', {
    origin: {
      kind: OriginKind.http,
      defaultCache: 3600,
      config: { scheme: 'http', host: `127.0.0.1:${port}`, pathPrefix: '', rewriteHost: '' },
      ...overrides,
    },
  });
  expect(added.status, JSON.stringify(added.body)).toBe(200);
  return (added.body.origin as { name: string }).name;
}

beforeAll(async () => {
  images = await serveFuzzImages();
  const { port } = images;
  const server = await testServer();
  const tenant = await createTenant(server.deps);
  const { email } = await createTestUser(server.deps, {
    accountId: tenant.accountId,
    permission: Permission.origin,
  });
  const client = await loggedIn(server.baseUrl, email);
  hosts.plain = await addOrigin(client, port, {});
  hosts.signed = await addOrigin(client, port, { enableSignedUrl: true, signingSecret: SECRET });
  hosts.guarded = await addOrigin(client, port, { acl: { isAllowList: false, cidrs: ['127.0.0.2/32'] } });
  const cacheDir = mkdtempSync(join(tmpdir(), 'ukiyo-hit-path-'));
  [hot, full] = await Promise.all([
    startTestEdge(server, { cacheDir }),
    startTestEdge(server, { cacheDir, hitPath: false }),
  ]);
  for (const edge of [hot, full])
    await new Promise<void>((resolve) => edge.server.listen(0, '127.0.0.1', resolve));
});

afterAll(async () => {
  await Promise.all([hot?.close(), full?.close()]);
  await images.close();
});

const validPath = fc
  .record({
    w: fc.integer({ min: 1, max: 400 }),
    f: fc.constantFrom('', 'f=webp', 'f=webp:jpg', 'f=avif:webp:png', 'f=png', 'f=json'),
    q: fc.constantFrom('', 'q=60'),
    expires: fc.constantFrom('', 'past', 'future'),
    image: fc.constantFrom('/photo.jpg', '/logo.png', '/missing.jpg'),
  })
  .map(({ w, f, q, expires, image }) => {
    const at = Math.floor(Date.now() / 1000) + (expires === 'past' ? -100 : 86_400);
    const params = [`w=${w}`, f, q, expires && `expires=${formatExpires(at)}`].filter(Boolean).join(',');
    return `/${params}${image}`;
  });

const requestCase = fc.record({
  path: fc.oneof(
    { weight: 3, arbitrary: validPath },
    { weight: 1, arbitrary: fc.constantFrom(...fuzzPaths(200, SEED)) },
  ),
  origin: fc.constantFrom('plain', 'signed', 'guarded') as fc.Arbitrary<keyof typeof hosts>,
  signature: fc.constantFrom('in-path', 'wrong-in-path', 'in-header', 'wrong-in-header', 'none'),
  accept: fc.constantFrom(undefined, 'image/webp,*/*', 'image/avif,image/webp,*/*', 'image/png'),
  ifNoneMatch: fc.constantFrom(undefined, 'same', '"other"'),
  client: fc.constantFrom('127.0.0.1', '127.0.0.2'),
  method: fc.constantFrom('GET', 'GET', 'HEAD'),
  style: fc.constantFrom<HeadStyle>('plain', 'plain', 'capitals', 'padded', 'accept-twice', 'close'),
});

describe('the hit path', () => {
  it('answers every request as the full path does', { timeout: 300_000 }, async () => {
    let fromMemory = 0;
    await fc.assert(
      fc.asyncProperty(requestCase, async (c) => {
        // The first request is the one a customer's page makes, validly signed where signed.
        let path = c.path;
        const headers: Record<string, string> = {};
        const warm: Record<string, string> = {};
        if (c.origin === 'signed') {
          const signed = signPath(c.signature.startsWith('wrong') ? 'not-the-secret' : SECRET, c.path);
          const sig = /sig=([^,/]+)/.exec(signPath(SECRET, c.path))?.[1];
          if (c.signature.endsWith('in-path')) path = signed;
          else if (sig) {
            warm['x-imageflux-signature'] = sig;
            if (c.signature !== 'none') headers['x-imageflux-signature'] = /sig=([^,/]+)/.exec(signed)![1]!;
          }
        }
        if (c.accept) headers.accept = warm.accept = c.accept;
        const host = hosts[c.origin];
        const first = await ask(hot, host, path, { headers: warm });
        if (c.ifNoneMatch)
          headers['if-none-match'] = c.ifNoneMatch === 'same' ? String(first.headers.etag) : c.ifNoneMatch;
        const options = { headers, client: c.client, method: c.method, style: c.style };
        const answer = comparable(await ask(hot, host, path, options));
        const reference = comparable(await ask(full, host, path, options));
        if (answer.headers['x-cache'] === 'HIT') fromMemory++;
        expect(Math.abs(answer.maxAge - reference.maxAge)).toBeLessThanOrEqual(1);
        expect({ ...answer, maxAge: 0 }).toEqual({ ...reference, maxAge: 0 });
      }),
      { numRuns: RUNS, seed: SEED },
    );
    // The comparison covered the hit path, not only refusals, and the hot path on the socket.
    expect(fromMemory).toBeGreaterThan(RUNS / 5);
    const hotAnswers = (await hot.metrics.getSingleMetric('ukiyo_edge_hot_path_answers_total')?.get())
      ?.values;
    expect(hotAnswers?.[0]?.value).toBeGreaterThan(RUNS / 10);
  });
});
