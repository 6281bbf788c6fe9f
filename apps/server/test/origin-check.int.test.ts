import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { OriginKind, Permission } from '@ukiyo/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ORIGIN_CHECK_PER_USER } from '../src/operations/origins.ts';
import {
  createTenant,
  createTestUser,
  insertHttpOrigin,
  loggedIn,
  startImageServer,
  testServer,
  type Client,
  type TestServer,
} from './harness.ts';

/**
 * origin.check through the real HTTP app: the edge's fetch code run by the console server,
 * each outcome a code with details, never text.
 */
let server: TestServer;
let imageServer: Server;
let refusingServer: Server;
let silentServer: Server;
const silentSockets = new Set<Socket>();

const hostOf = (listener: Server) => `127.0.0.1:${(listener.address() as AddressInfo).port}`;

beforeAll(async () => {
  server = await testServer();
  imageServer = await startImageServer({ width: 40, height: 30 }, '#336699');
  // 403 under /private/, a redirect to itself at /loop, 404 for everything else.
  refusingServer = createServer((req, res) => {
    if (req.url?.startsWith('/private/')) res.writeHead(403, { 'content-type': 'text/plain' }).end('no');
    else if (req.url === '/loop') res.writeHead(302, { location: '/loop' }).end();
    else res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>no</h1>');
  });
  // Accepts connections and never answers: only the check's timeout ends the wait.
  silentServer = createServer(() => undefined);
  silentServer.on('connection', (socket) => silentSockets.add(socket));
  await Promise.all(
    [refusingServer, silentServer].map(
      (listener) => new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve)),
    ),
  );
});

afterAll(async () => {
  for (const socket of silentSockets) socket.destroy();
  await Promise.all(
    [imageServer, refusingServer, silentServer].map(
      (listener) => new Promise<void>((resolve) => listener.close(() => resolve())),
    ),
  );
});

async function member(permission: number = Permission.origin, baseUrl?: string) {
  const tenant = await createTenant(server.deps);
  const organizationId = tenant.organizationIds[0]!;
  await server.deps.db
    .updateTable('organizations')
    .set({ plan: 4 })
    .where('id', '=', organizationId)
    .execute();
  const { email } = await createTestUser(server.deps, { accountId: tenant.accountId, permission });
  return { client: await loggedIn(baseUrl ?? server.baseUrl, email), organizationId, email };
}

async function addOrigin(client: Client, host: string, scheme = 'http'): Promise<number> {
  const added = await client.call('origin.add', {
    origin: { kind: OriginKind.http, config: { scheme, host, pathPrefix: '', rewriteHost: '' } },
  });
  expect(added.status, JSON.stringify(added.body)).toBe(200);
  return (added.body.origin as { originID: number }).originID;
}

async function originIdOf(name: string): Promise<number> {
  const row = await server.deps.db
    .selectFrom('origins')
    .select('id')
    .where('name', '=', name)
    .executeTakeFirstOrThrow();
  return row.id;
}

describe('origin.check', () => {
  it('reports OK with the status, content type, bytes and time of an origin answering 200', async () => {
    const { client } = await member();
    const originID = await addOrigin(client, hostOf(imageServer));
    const checked = await client.call('origin.check', { originID, path: 'images/photo.jpg' });
    expect(checked.status).toBe(200);
    const result = checked.body.result as Record<string, unknown>;
    expect(result).toMatchObject({
      outcome: 'ok',
      path: '/images/photo.jpg',
      status: 200,
      contentType: 'image/jpeg',
      truncated: false,
      reason: '',
    });
    expect(result.bytes).toBeGreaterThan(100);
    expect(typeof result.elapsedMs).toBe('number');
    // Without a path the origin's root is fetched.
    expect((await client.call('origin.check', { originID })).body.result).toMatchObject({
      outcome: 'ok',
      path: '/',
    });
  });

  it('reports notFound with the status of an origin answering 404', async () => {
    const { client } = await member();
    const originID = await addOrigin(client, hostOf(refusingServer));
    expect((await client.call('origin.check', { originID, path: '/missing.jpg' })).body.result).toMatchObject(
      {
        outcome: 'notFound',
        status: 404,
        contentType: 'text/html',
      },
    );
  });

  it('refuses a private address when ALLOW_PRIVATE_ORIGINS is unset, without connecting', async () => {
    const guarded = await server.withConfig({ ALLOW_PRIVATE_ORIGINS: false });
    const { organizationId, email } = await member();
    // Saved on loopback before the guard (or by an edge allowed private origins): written directly.
    const originID = await originIdOf(
      await insertHttpOrigin(server.deps, organizationId, hostOf(imageServer)),
    );
    let connections = 0;
    const count = () => connections++;
    imageServer.on('connection', count);
    const client = await loggedIn(guarded, email);
    const checked = await client.call('origin.check', { originID });
    imageServer.off('connection', count);
    expect(checked.body.result).toMatchObject({ outcome: 'privateAddress', status: null, bytes: 0 });
    expect(connections).toBe(0);
  });

  it('reports a DNS failure for a host that does not resolve', async () => {
    const { client, organizationId } = await member();
    const originID = await originIdOf(
      await insertHttpOrigin(server.deps, organizationId, 'no-such-origin.ukiyo-test.invalid'),
    );
    expect((await client.call('origin.check', { originID })).body.result).toMatchObject({
      outcome: 'dnsFailure',
      status: null,
    });
  });

  it('reports a TLS error for HTTPS to an origin that speaks plain HTTP', async () => {
    const { client } = await member();
    const originID = await addOrigin(client, hostOf(imageServer), 'https');
    expect((await client.call('origin.check', { originID })).body.result).toMatchObject({
      outcome: 'tlsError',
    });
  });

  it('gives up at its timeout on an origin that never answers', async () => {
    const { client } = await member();
    const originID = await addOrigin(client, hostOf(silentServer));
    const started = Date.now();
    const checked = await client.call('origin.check', { originID });
    expect(checked.body.result).toMatchObject({ outcome: 'timeout', status: null });
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(4_500);
    expect(elapsed).toBeLessThan(9_000);
  });

  it("answers not found for another organization's origin and fetches nothing", async () => {
    const owner = await member();
    const originID = await addOrigin(owner.client, hostOf(imageServer));
    const stranger = await member();
    expect(await stranger.client.call('origin.check', { originID })).toMatchObject({
      status: 404,
      body: { error: 'origin not found', params: { id: originID } },
    });
  });

  it('is refused to a member without the origin permission', async () => {
    const owner = await member();
    const originID = await addOrigin(owner.client, hostOf(imageServer));
    const tenant = await server.deps.db
      .selectFrom('organizations')
      .select('sakura_account_id')
      .where('id', '=', owner.organizationId)
      .executeTakeFirstOrThrow();
    const { email } = await createTestUser(server.deps, {
      accountId: tenant.sakura_account_id,
      permission: Permission.statistics | Permission.cache,
    });
    const viewer = await loggedIn(server.baseUrl, email);
    expect(await viewer.call('origin.check', { originID })).toMatchObject({
      status: 404,
      body: { error: 'not enough permission' },
    });
  });

  it('validates its input with the contract', async () => {
    const { client } = await member();
    const originID = await addOrigin(client, hostOf(imageServer));
    expect(await client.call('origin.check', { originID, path: 'a\nb' })).toMatchObject({
      status: 400,
      body: { error: 'validation error', invalids: { path: ['validation.invalid'] } },
    });
    expect(await client.call('origin.check', { originID: 'x' })).toMatchObject({
      status: 400,
      body: { error: 'validation error' },
    });
  });

  it('is rate limited per user', async () => {
    const { client } = await member();
    const originID = await addOrigin(client, hostOf(imageServer));
    for (let i = 0; i < ORIGIN_CHECK_PER_USER.points; i++)
      expect((await client.call('origin.check', { originID })).status).toBe(200);
    const refused = await client.call('origin.check', { originID });
    expect(refused).toMatchObject({ status: 429, body: { error: 'too many attempts' } });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});
