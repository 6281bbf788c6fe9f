import { request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ALL_MEMBER_PERMISSIONS, OriginKind, Permission } from '@ukiyo/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Edge } from '@ukiyo/edge';
import {
  createTenant,
  createTestUser,
  loggedIn,
  testServer,
  type Client,
  startImageServer,
  startTestEdge,
} from './harness.ts';

// The public cache API and the console's cache operations, over a real edge's cache.
let edge: Edge;
let imageServer: Server;
let baseUrl: string;
let owner: Client;
let originName: string;
let originID: number;
let cacheToken: string;
let statisticsToken: string;

function fromEdge(host: string, path: string): Promise<number> {
  const { port } = edge.server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { host } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

async function publicCall(operation: string, body: unknown, token?: string) {
  const response = await fetch(`${baseUrl}/api/${operation}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...(token ? { Authorization: `Bearer ${token}` } : {}) },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return {
    status: response.status,
    body: (await response.json()) as { ok: boolean; error?: string; urls?: string[] },
  };
}

async function issueToken(client: Client, permission: number): Promise<string> {
  const added = await client.call('auth_token.add', { authToken: { description: 'cache', permission } });
  return added.body.encodedToken as string;
}

beforeAll(async () => {
  const server = await testServer();
  imageServer = await startImageServer({ width: 640, height: 480 }, '#2e8b57');
  edge = await startTestEdge(server);
  await new Promise<void>((resolve) => edge.server.listen(0, '127.0.0.1', resolve));
  baseUrl = await server.withConfig({}, { cacheControl: edge });

  const tenant = await createTenant(server.deps);
  owner = await loggedIn(
    baseUrl,
    (await createTestUser(server.deps, { accountId: tenant.accountId, permission: ALL_MEMBER_PERMISSIONS }))
      .email,
  );
  const port = (imageServer.address() as AddressInfo).port;
  const added = await owner.call('origin.add', {
    origin: {
      kind: OriginKind.http,
      config: { scheme: 'http', host: `127.0.0.1:${port}`, pathPrefix: '', rewriteHost: '' },
    },
  });
  ({ name: originName, originID } = added.body.origin as { name: string; originID: number });
  await edge.refreshOrigins();
  cacheToken = await issueToken(owner, Permission.cache);
  statisticsToken = await issueToken(owner, Permission.statistics);
});

afterAll(async () => {
  await edge.close();
  await new Promise((resolve) => imageServer.close(resolve));
});

describe('public cache API', () => {
  it('lists the cached variants of an image URL and deletes them', async () => {
    expect(await fromEdge(originName, '/w=100/photos/a.jpg')).toBe(200);
    expect(await fromEdge(originName, '/w=200,f=png/photos/a.jpg')).toBe(200);
    expect(await fromEdge(originName, '/w=100/photos/other.jpg')).toBe(200);
    const url = `http://${originName}/photos/a.jpg`;

    const lookup = await publicCall('cache.lookup', { url }, cacheToken);
    expect(lookup.status).toBe(200);
    expect(lookup.body.ok).toBe(true);
    expect(lookup.body.urls).toHaveLength(2);
    expect(lookup.body.urls!.every((found) => found.endsWith('/photos/a.jpg'))).toBe(true);

    const removed = await publicCall('cache.delete', { url }, cacheToken);
    expect(removed.body).toMatchObject({ ok: true, urls: expect.arrayContaining(lookup.body.urls!) });
    expect((await publicCall('cache.lookup', { url }, cacheToken)).body).toEqual({ ok: true, urls: [] });
    // The other image stays cached.
    const other = await publicCall(
      'cache.lookup',
      { url: `http://${originName}/photos/other.jpg` },
      cacheToken,
    );
    expect(other.body.urls).toHaveLength(1);
  });

  it('refuses tokens without the cache permission, missing tokens and other organizations’ URLs', async () => {
    const url = `http://${originName}/photos/a.jpg`;
    expect((await publicCall('cache.lookup', { url })).status).toBe(401);
    expect((await publicCall('cache.lookup', { url }, statisticsToken)).status).toBe(403);
    expect((await publicCall('cache.delete', { url }, statisticsToken)).body.ok).toBe(false);

    const server = await testServer();
    const stranger = await createTenant(server.deps);
    const strangerClient = await loggedIn(
      baseUrl,
      (
        await createTestUser(server.deps, {
          accountId: stranger.accountId,
          permission: ALL_MEMBER_PERMISSIONS,
        })
      ).email,
    );
    const foreign = await publicCall(
      'cache.delete',
      { url },
      await issueToken(strangerClient, Permission.cache),
    );
    expect(foreign).toMatchObject({ status: 404, body: { ok: false, urls: [] } });
    expect((await strangerClient.call('cache.lookup', { originID, url })).body.error).toBe(
      'origin not found',
    );
  });

  it('answers bad bodies with a clear error', async () => {
    expect((await publicCall('cache.lookup', '{nope', cacheToken)).status).toBe(400);
    expect((await publicCall('cache.lookup', { url: '' }, cacheToken)).body.ok).toBe(false);
    expect((await publicCall('cache.lookup', { url: '/photos/a.jpg' }, cacheToken)).status).toBe(404);
  });

  it('publishes its OpenAPI document', async () => {
    const document = (await (await fetch(`${baseUrl}/api/openapi.json`)).json()) as {
      openapi: string;
      paths: Record<string, unknown>;
    };
    expect(document.openapi).toBe('3.1.0');
    expect(Object.keys(document.paths)).toEqual(
      expect.arrayContaining(['/api/cache.lookup', '/api/cache.delete', '/api/token.info']),
    );
  });
});

describe('console cache operations', () => {
  it('look up and delete by origin and path, within the organization', async () => {
    expect(await fromEdge(originName, '/w=120/photos/b.jpg')).toBe(200);
    const lookup = await owner.call('cache.lookup', { originID, url: 'photos/b.jpg' });
    expect(lookup.status).toBe(200);
    expect((lookup.body.urls as string[]).length).toBe(1);
    expect(
      (await owner.call('cache.delete', { originID, url: `http://${originName}/photos/b.jpg` })).status,
    ).toBe(200);
    expect((await owner.call('cache.lookup', { originID, url: 'photos/b.jpg' })).body).toEqual({ urls: [] });
    expect(
      (await owner.call('cache.lookup', { originID, url: 'http://elsewhere.example/photos/b.jpg' })).body
        .error,
    ).toBe('origin not found');
  });
});
