import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ALL_MEMBER_PERMISSIONS, OriginKind, Permission } from '@ukiyo/contract';
import type { Edge } from '@ukiyo/edge';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTenant,
  createTestUser,
  getFromEdge,
  loggedIn,
  startImageServer,
  startTestEdge,
  testServer,
  type Client,
} from './harness.ts';

// Purges by path prefix and of a whole origin, through the console and the public API, over a
// real edge's memory and disk cache: what was purged misses next, everything else still hits.
let edge: Edge;
let imageServer: Server;
let baseUrl: string;
let owner: Client;
let photos: { originID: number; name: string };
let other: { originID: number; name: string };

async function addOrigin(): Promise<{ originID: number; name: string }> {
  const port = (imageServer.address() as AddressInfo).port;
  const added = await owner.call('origin.add', {
    origin: {
      kind: OriginKind.http,
      defaultCache: 3600,
      config: { scheme: 'http', host: `127.0.0.1:${port}`, pathPrefix: '', rewriteHost: '' },
    },
  });
  expect(added.status).toBe(200);
  return added.body.origin as { originID: number; name: string };
}

/** The edge's X-Cache for one request (HIT, MISS). */
async function cacheResult(host: string, path: string): Promise<string> {
  const answer = await getFromEdge(edge, host, path);
  expect(answer.status).toBe(200);
  return String(answer.headers['x-cache']);
}

/** Requests each path until it is cached (the second answer is a hit). */
async function warm(host: string, paths: readonly string[]): Promise<void> {
  for (const path of paths) {
    await cacheResult(host, path);
    expect(await cacheResult(host, path)).toBe('HIT');
  }
}

async function purgePrefix(pathPrefix: string, originID = photos.originID) {
  return owner.call('cache.purge_prefix', { originID, pathPrefix });
}

/** The public API's purge by prefix with a token of `client`'s organization holding `permission`. */
async function publicPurge(client: Client, permission: number, url: string) {
  const issued = await client.call('auth_token.add', {
    authToken: { description: 'release purge', permission },
  });
  return fetch(`${baseUrl}/api/cache.purge_prefix`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${issued.body.encodedToken}` },
    body: JSON.stringify({ url }),
  });
}

/** A member holding every permission of a new organization, logged in. */
async function newOwner(): Promise<Client> {
  const server = await testServer();
  const tenant = await createTenant(server.deps);
  const { email } = await createTestUser(server.deps, {
    accountId: tenant.accountId,
    permission: ALL_MEMBER_PERMISSIONS,
  });
  return loggedIn(baseUrl, email);
}

const UNDER_PHOTOS = ['/w=100/photos/a.jpg', '/w=200,f=png/photos/a.jpg', '/w=100/photos/2024/b.jpg'];
const BANNER = '/w=100/banners/c.jpg';

beforeAll(async () => {
  const server = await testServer();
  imageServer = await startImageServer({ width: 400, height: 300 }, '#8b4513');
  edge = await startTestEdge(server);
  await new Promise<void>((resolve) => edge.server.listen(0, '127.0.0.1', resolve));
  baseUrl = await server.withConfig({}, { cacheControl: edge });
  owner = await newOwner();
  photos = await addOrigin();
  other = await addOrigin();
  await edge.refreshOrigins();
});

afterAll(async () => {
  await edge.close();
  await new Promise((resolve) => imageServer.close(resolve));
});

describe('purge by path prefix and of a whole origin', () => {
  it('purges only the images under a prefix, then the whole origin, never another origin', async () => {
    await warm(photos.name, [...UNDER_PHOTOS, BANNER, '/w=100/photos.jpg']);
    await warm(other.name, UNDER_PHOTOS);

    const purged = await purgePrefix('/photos/');
    expect(purged.status, JSON.stringify(purged.body)).toBe(200);
    expect(purged.body).toEqual({ images: 2 });
    for (const path of UNDER_PHOTOS) expect(await cacheResult(photos.name, path)).toBe('MISS');
    expect(await cacheResult(photos.name, BANNER)).toBe('HIT');
    // A sibling whose path merely begins with the same letters is not under "/photos/".
    expect(await cacheResult(photos.name, '/w=100/photos.jpg')).toBe('HIT');
    for (const path of UNDER_PHOTOS) expect(await cacheResult(other.name, path)).toBe('HIT');

    const everything = await purgePrefix('/');
    expect(everything.body).toEqual({ images: 4 });
    for (const path of [...UNDER_PHOTOS, BANNER]) expect(await cacheResult(photos.name, path)).toBe('MISS');
    for (const path of UNDER_PHOTOS) expect(await cacheResult(other.name, path)).toBe('HIT');
  });

  it('purges by prefix with an API token through the public API, recorded in the audit trail', async () => {
    await warm(other.name, [BANNER, UNDER_PHOTOS[0]!]);
    const answer = await publicPurge(owner, Permission.cache, `http://${other.name}/banners/`);
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({ ok: true, images: 1 });
    expect(await cacheResult(other.name, BANNER)).toBe('MISS');
    expect(await cacheResult(other.name, UNDER_PHOTOS[0]!)).toBe('HIT');

    const trail = await owner.call('audit.organization_list', { kind: 'cache' });
    expect((trail.body.entries as unknown[]).slice(0, 3)).toMatchObject([
      {
        operation: 'cache.purge_prefix',
        subject: '/banners/',
        token: { name: 'release purge' },
        after: { originID: other.originID, pathPrefix: '/banners/', images: 1 },
      },
      { operation: 'cache.purge_prefix', subject: '/', token: null, after: { images: 4 } },
      { operation: 'cache.purge_prefix', subject: '/photos/', token: null, after: { images: 2 } },
    ]);
  });

  it('refuses a prefix without its leading slash, another organization’s origin and tokens without the cache bit', async () => {
    expect((await purgePrefix('photos/')).body).toMatchObject({
      error: 'validation error',
      invalids: { pathPrefix: ['validation.invalid'] },
    });
    const stranger = await newOwner();
    expect(
      (await stranger.call('cache.purge_prefix', { originID: photos.originID, pathPrefix: '/' })).body.error,
    ).toBe('origin not found');
    expect((await publicPurge(owner, Permission.statistics, `http://${photos.name}/`)).status).toBe(403);
    const foreign = await publicPurge(stranger, Permission.cache, `http://${photos.name}/`);
    expect(foreign.status).toBe(404);
    expect(await foreign.json()).toMatchObject({ ok: false, images: 0 });
  });
});
