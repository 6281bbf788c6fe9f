import { request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ALL_MEMBER_PERMISSIONS, OriginKind, Permission, SAMPLE_PATHS } from '@ukiyo/contract';
import { verifySignature } from '@ukiyo/imaging';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Edge } from '@ukiyo/edge';
import {
  Client,
  createTenant,
  createTestUser,
  loggedIn,
  startImageServer,
  startTestEdge,
  testServer,
  type TestServer,
} from './harness.ts';

// The preview tester's server side: the guest origin over the bundled samples, and delivery
// URLs made (and signed) by the server for an organization's own origins.
let server: TestServer;
let edge: Edge;
let imageServer: Server;

function fromEdge(url: string): Promise<{ status: number; type: string; body: Buffer; cors: string }> {
  const { port } = edge.server.address() as AddressInfo;
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path: target.pathname, headers: { host: target.hostname } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            type: String(res.headers['content-type']),
            body: Buffer.concat(chunks),
            cors: String(res.headers['access-control-allow-origin']),
          }),
        );
      },
    );
    req.on('error', reject);
    req.end();
  });
}

async function memberOf(accountId: number, permission: number): Promise<Client> {
  const { email } = await createTestUser(server.deps, { accountId, permission });
  return loggedIn(server.baseUrl, email);
}

async function member(): Promise<Client> {
  return memberOf((await createTenant(server.deps)).accountId, ALL_MEMBER_PERMISSIONS);
}

beforeAll(async () => {
  server = await testServer();
  imageServer = await startImageServer({ width: 400, height: 300 }, '#264653');
  edge = await startTestEdge(server);
  await new Promise<void>((resolve) => edge.server.listen(0, '127.0.0.1', resolve));
  await edge.refreshOrigins();
});

afterAll(async () => {
  await edge.close();
  await new Promise((resolve) => imageServer.close(resolve));
});

describe('guest preview', () => {
  it('names the samples origin without login, and the edge converts its images', async () => {
    const guest = await new Client(server.baseUrl).call('preview.guest_origin');
    expect(guest.status).toBe(200);
    expect(guest.body).toEqual({
      name: `samples.${server.deps.config.EDGE_DOMAIN}`,
      edgeUrl: `http://samples.${server.deps.config.EDGE_DOMAIN}:${server.deps.config.EDGE_PORT}`,
      samplePaths: [...SAMPLE_PATHS],
    });
    const converted = await fromEdge(`${guest.body.edgeUrl as string}/w=320,f=webp/fuji.jpg`);
    expect(converted).toMatchObject({ status: 200, type: 'image/webp', cors: '*' });
    expect(await sharp(converted.body).metadata()).toMatchObject({ width: 320, height: 213 });
    for (const path of SAMPLE_PATHS) {
      expect((await fromEdge(`${guest.body.edgeUrl as string}${path}`)).status).toBe(200);
    }
  });

  it('serves only the bundled files', async () => {
    const { edgeUrl } = (await new Client(server.baseUrl).call('preview.guest_origin')).body as {
      edgeUrl: string;
    };
    // Files beside the samples are not images of the origin, and nothing outside can be named.
    for (const path of ['/missing.jpg', '/README.md']) {
      expect((await fromEdge(`${edgeUrl}${path}`)).status, path).toBe(404);
    }
    for (const path of ['/..%2Fpackage.json', '/%2E%2E/README.md', '/%2E%2E/%2E%2E/package.json']) {
      expect((await fromEdge(`${edgeUrl}${path}`)).status, path).toBeGreaterThanOrEqual(400);
    }
  });
});

describe('preview.urls', () => {
  it('makes delivery URLs of the organization’s origin, signed when the origin signs', async () => {
    const { accountId } = await createTenant(server.deps);
    const owner = await memberOf(accountId, ALL_MEMBER_PERMISSIONS);
    const port = (imageServer.address() as AddressInfo).port;
    const added = await owner.call('origin.add', {
      origin: {
        kind: OriginKind.http,
        enableSignedUrl: true,
        signingSecret: 'preview-secret',
        config: { scheme: 'http', host: `127.0.0.1:${port}`, pathPrefix: '', rewriteHost: '' },
      },
    });
    const origin = added.body.origin as { originID: number; name: string; deliveryUrl: string };
    expect(origin.deliveryUrl).toBe(`http://${origin.name}:${server.deps.config.EDGE_PORT}`);
    await edge.refreshOrigins();

    const result = await owner.call('preview.urls', {
      originID: origin.originID,
      paths: ['/photo.jpg', '/w=200,f=png/photo.jpg'],
    });
    expect(result.status).toBe(200);
    const [original, converted] = result.body.urls as string[];
    expect(original).toMatch(new RegExp(`^${origin.deliveryUrl}/c/sig=1\\.[^,/]+/photo\\.jpg$`));
    expect(converted).toMatch(new RegExp(`^${origin.deliveryUrl}/sig=1\\.[^,]+,w=200,f=png/photo\\.jpg$`));
    expect(verifySignature('preview-secret', new URL(converted!).pathname)).toBe(true);
    const image = await fromEdge(converted!);
    expect(image).toMatchObject({ status: 200, type: 'image/png' });
    expect(await sharp(image.body).metadata()).toMatchObject({ width: 200, height: 150 });
    // Unsigned, the edge refuses the same image.
    expect((await fromEdge(`${origin.deliveryUrl}/w=200,f=png/photo.jpg`)).status).toBe(403);
    // Signing is for members who may see the secret: others get the URLs unsigned.
    const viewer = await memberOf(accountId, Permission.statistics);
    const unsigned = await viewer.call('preview.urls', { originID: origin.originID, paths: ['/photo.jpg'] });
    expect(unsigned.body.urls).toEqual([`${origin.deliveryUrl}/photo.jpg`]);
  });

  it('refuses another organization’s origin and paths without a leading slash', async () => {
    const owner = await member();
    const stranger = await member();
    const added = await owner.call('origin.add', {
      origin: {
        kind: OriginKind.http,
        config: { scheme: 'https', host: 'images.example.com', pathPrefix: '', rewriteHost: '' },
      },
    });
    const { originID } = added.body.origin as { originID: number };
    const foreign = await stranger.call('preview.urls', { originID, paths: ['/a.jpg'] });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toMatchObject({ error: 'origin not found', params: { id: originID } });
    const bad = await owner.call('preview.urls', { originID, paths: ['a.jpg'] });
    expect(bad.status).toBe(400);
    expect(bad.body.invalids).toEqual({ 'paths.0': ['validation.invalid'] });
    const unsigned = await owner.call('preview.urls', { originID, paths: ['/w=10/a.jpg'] });
    expect(unsigned.body.urls).toEqual([
      `http://${(added.body.origin as { name: string }).name}:${server.deps.config.EDGE_PORT}/w=10/a.jpg`,
    ]);
  });
});
