// f=json and f=blurhash through the real edge: the same path as any variant (signatures, cache,
// metering, budget), on a real database and a local origin.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decode } from 'blurhash';
import { OriginKind, Permission } from '@ukiyo/contract';
import { signPath } from '@ukiyo/imaging';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTenant,
  createTestUser,
  getFromEdge,
  loggedIn,
  startTestEdge,
  testServer,
  type Client,
  type TestServer,
} from '../../server/test/harness.ts';
import type { Edge } from '../src/index.ts';

let photo: Buffer; // 1200x800 JPEG, mostly orange, a dark band across the bottom quarter
let animation: Buffer; // 160x120 GIF, 3 frames: orange first, then blue and green
let originServer: Server;
let server: TestServer;
let client: Client;
let edge: Edge;
let originPort = 0;
let originFetches = 0;

const get = (host: string, path: string) => getFromEdge(edge, host, path);

async function addOrigin(
  overrides: Record<string, unknown> = {},
): Promise<{ originID: number; name: string }> {
  const result = await client.call('origin.add', {
    origin: {
      kind: OriginKind.http,
      defaultCache: 3600,
      config: { scheme: 'http', host: `127.0.0.1:${originPort}`, pathPrefix: '', rewriteHost: '' },
      ...overrides,
    },
  });
  expect(result.status, JSON.stringify(result.body)).toBe(200);
  await edge.refreshOrigins();
  return result.body.origin as { originID: number; name: string };
}

beforeAll(async () => {
  photo = await sharp({ create: { width: 1200, height: 800, channels: 3, background: '#f08020' } })
    .composite([
      {
        input: { create: { width: 1200, height: 200, channels: 3, background: '#202020' } },
        top: 600,
        left: 0,
      },
    ])
    .jpeg({ quality: 85 })
    .toBuffer();
  const frames = await Promise.all(
    ['#f08020', '#2040c0', '#20a040'].map((background) =>
      sharp({ create: { width: 160, height: 120, channels: 3, background } })
        .png()
        .toBuffer(),
    ),
  );
  animation = await sharp(frames, { join: { animated: true } })
    .gif({ delay: frames.map(() => 100) })
    .toBuffer();
  const files: Record<string, [Buffer, string]> = {
    '/photo.jpg': [photo, 'image/jpeg'],
    '/anim.gif': [animation, 'image/gif'],
  };
  originServer = createServer((req, res) => {
    const file = files[req.url ?? ''];
    if (!file) return res.writeHead(404).end();
    originFetches++;
    res.writeHead(200, { 'content-type': file[1] }).end(file[0]);
  });
  await new Promise<void>((resolve) => originServer.listen(0, '127.0.0.1', resolve));
  originPort = (originServer.address() as AddressInfo).port;
  server = await testServer();
  const tenant = await createTenant(server.deps);
  const { email } = await createTestUser(server.deps, {
    accountId: tenant.accountId,
    permission: Permission.origin,
  });
  client = await loggedIn(server.baseUrl, email);
  edge = await startTestEdge(server);
  await new Promise<void>((resolve) => edge.server.listen(0, '127.0.0.1', resolve));
});

afterAll(async () => {
  await edge?.close();
  await new Promise((resolve) => originServer?.close(resolve));
});

describe('f=json', () => {
  it('answers the documented JSON of the variant and the original, then from the cache, metered', async () => {
    const origin = await addOrigin();
    const path = '/w=300,f=webp,f=json/photo.jpg';
    const first = await get(origin.name, path);
    expect(first.status, first.body.toString()).toBe(200);
    expect(first.headers['content-type']).toBe('application/json');
    expect(first.headers['x-cache']).toBe('MISS');
    expect(first.headers['cache-control']).toBe('public, max-age=3600');
    const variant = await get(origin.name, '/w=300,f=webp/photo.jpg');
    const info = JSON.parse(first.body.toString()) as Record<string, unknown>;
    expect(info).toEqual({
      width: 300,
      height: 200,
      format: 'webp',
      contentType: 'image/webp',
      bytes: variant.body.length,
      hasAlpha: false,
      frames: 1,
      orientation: 1,
      dominantColor: expect.stringMatching(/^#[0-9a-f]{6}$/),
      blurhash: expect.any(String),
      original: {
        width: 1200,
        height: 800,
        format: 'jpeg',
        contentType: 'image/jpeg',
        bytes: photo.length,
        hasAlpha: false,
        frames: 1,
        orientation: 1,
      },
    });
    // Orange (#f08020) dominates, within a histogram bin (16 levels) after two lossy encodings.
    const dominant = [1, 3, 5].map((at) => parseInt(String(info.dominantColor).slice(at, at + 2), 16));
    [0xf0, 0x80, 0x20].forEach((channel, i) =>
      expect(Math.abs(dominant[i]! - channel)).toBeLessThanOrEqual(16),
    );
    // The hash keeps the dark band: the decoded bottom row is much darker than the top one.
    const decoded = decode(String(info.blurhash), 4, 8);
    expect(decoded[0]).toBeGreaterThan(200);
    expect(decoded[0]! - decoded[7 * 4 * 4]!).toBeGreaterThan(60);

    const fetches = originFetches;
    const second = await get(origin.name, path);
    expect(second.headers['x-cache']).toBe('HIT');
    expect(second.body.equals(first.body)).toBe(true);
    expect(originFetches).toBe(fetches);

    await edge.flushUsage();
    const usage = await server.deps.db
      .selectFrom('usage_hourly')
      .select(['requests', 'outbound_bytes'])
      .where('origin_id', '=', origin.originID)
      .executeTakeFirstOrThrow();
    expect([Number(usage.requests), Number(usage.outbound_bytes)]).toEqual([
      3,
      first.body.length * 2 + variant.body.length,
    ]);
  });

  it('is signed like any URL when the origin signs', async () => {
    const secret = 'info-signing-secret';
    const origin = await addOrigin({ enableSignedUrl: true, signingSecret: secret });
    const refused = await get(origin.name, '/f=json/photo.jpg');
    expect(refused.status).toBe(403);
    expect(refused.headers['ukiyo-error']).toBe('invalid-signature');
    // A signature of the image without f=json does not open the answer.
    const imageSignature = /sig=([^,/]+)/.exec(signPath(secret, '/w=10/photo.jpg'))![1]!;
    expect((await get(origin.name, `/w=10,f=json,sig=${imageSignature}/photo.jpg`)).status).toBe(403);
    const signed = await get(origin.name, signPath(secret, '/f=json/photo.jpg'));
    expect(signed.status).toBe(200);
    expect(JSON.parse(signed.body.toString())).toMatchObject({ width: 1200, height: 800, format: 'jpeg' });
  });

  it('describes the MP4 an animation becomes: its size and bytes, colours from its first frame', async () => {
    const origin = await addOrigin();
    const video = await get(origin.name, '/w=80,f=mp4/anim.gif');
    expect(video.status, video.body.toString()).toBe(200);
    expect(video.headers['content-type']).toBe('video/mp4');
    const answer = await get(origin.name, '/w=80,f=mp4,f=json/anim.gif');
    expect(answer.status, answer.body.toString()).toBe(200);
    expect(answer.headers['content-type']).toBe('application/json');
    const info = JSON.parse(answer.body.toString()) as Record<string, unknown>;
    expect(info).toMatchObject({
      width: 80,
      height: 60,
      format: 'mp4',
      contentType: 'video/mp4',
      bytes: video.body.length,
      hasAlpha: false,
      frames: 3,
      original: { format: 'gif', frames: 3, bytes: animation.length },
    });
    // The first frame's orange, not the blue or green that follow it.
    expect(info.dominantColor).toMatch(/^#[d-f][0-9a-f][6-9a-b][0-9a-f][0-3][0-9a-f]$/);
    expect(info.blurhash).toEqual(expect.any(String));
    // Of a still image there is no video to describe: refused up front, as f=mp4 alone is.
    const still = await get(origin.name, '/f=mp4,f=json/photo.jpg');
    expect(still.status).toBe(400);
    expect(still.headers['ukiyo-error']).toBe('not-animated');
  });

  it('refuses what the grammar does not know with 400, and a format chain naming json', async () => {
    const origin = await addOrigin();
    for (const path of ['/f=webp:json/photo.jpg', '/f=jsonp/photo.jpg']) {
      const answer = await get(origin.name, path);
      expect(answer.status).toBe(400);
      expect(answer.headers['ukiyo-error']).toBe('bad-parameter');
    }
  });
});

describe('f=blurhash', () => {
  it('answers the hash as plain text, cached, equal to the one in f=json', async () => {
    const origin = await addOrigin();
    const hash = await get(origin.name, '/w=300,f=blurhash/photo.jpg');
    expect(hash.status).toBe(200);
    expect(hash.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(hash.body.length).toBeLessThan(64);
    const info = JSON.parse((await get(origin.name, '/w=300,f=json/photo.jpg')).body.toString()) as {
      blurhash: string;
    };
    expect(hash.body.toString()).toBe(info.blurhash);
    expect((await get(origin.name, '/w=300,f=blurhash/photo.jpg')).headers['x-cache']).toBe('HIT');
  });
});
