import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { OriginKind, OriginStatus, Permission } from '@ukiyo/contract';
import { formatExpires, signPath } from '@ukiyo/imaging';
import S3rver from 's3rver';
import { sql } from 'kysely';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTenant,
  createTestUser,
  loggedIn,
  testServer,
  type Client,
  type TestServer,
} from '../../server/test/harness.ts';
import { createEdge, type Edge, type EdgeOptions } from '../src/index.ts';
import { Metering, TOP_KEYS_PER_FLUSH, TOP_ROWS_KEPT } from '../src/metering.ts';
import { nginxInstalled, startNginxOrigin } from './nginx-origin.ts';

// Fixtures are made with sharp here only to have real images to serve and to measure answers.
let photo: Buffer;
let logo: Buffer;
let bomb: Buffer;
let animation: Buffer; // 3 frames, 200x100, red, green, blue, delays 100/200/300 ms, loop 2

/** An HTTP origin on loopback that counts what it is asked for and can be told to fail. */
class LocalOrigin {
  readonly hits = new Map<string, number>();
  failing = false;
  delayMs = 0;
  cacheControl: string | null = null;
  age: string | null = null;
  /**
   * The originals' version, sent as this header (`etag` or `last-modified`); a request naming it
   * in the matching condition (If-None-Match, If-Modified-Since) gets 304.
   */
  version: { header: 'etag' | 'last-modified'; value: string } | null = null;
  /** The conditional requests answered 304. */
  notModified = 0;
  private server!: Server;
  port = 0;

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const path = req.url ?? '/';
      this.hits.set(path, (this.hits.get(path) ?? 0) + 1);
      setTimeout(() => {
        if (this.failing) return res.writeHead(500).end('broken');
        const files: Record<string, [Buffer, string]> = {
          '/base/images/photo.jpg': [photo, 'image/jpeg'],
          '/base/images/logo.png': [logo, 'image/png'],
          '/base/images/bomb.png': [bomb, 'image/png'],
          '/base/images/anim.gif': [animation, 'image/gif'],
          '/base/images/not-an-image.jpg': [Buffer.from('hello'), 'image/jpeg'],
          '/base/images/drawing.svg': [drawing, 'image/svg+xml'],
          '/base/images/tracking.svg': [tracking(this.port), 'image/svg+xml'],
        };
        if (path === '/base/images/moved.jpg')
          return res.writeHead(302, { location: '/base/images/photo.jpg' }).end();
        const file = files[path];
        if (!file) return res.writeHead(404).end('no');
        const version = this.version;
        const condition = version?.header === 'etag' ? 'if-none-match' : 'if-modified-since';
        if (version && req.headers[condition] === version.value) {
          this.notModified++;
          return res
            .writeHead(304, {
              [version.header]: version.value,
              ...(this.cacheControl ? { 'cache-control': this.cacheControl } : {}),
            })
            .end();
        }
        res.writeHead(200, {
          'content-type': file[1],
          'content-length': file[0].length,
          ...(this.cacheControl ? { 'cache-control': this.cacheControl } : {}),
          ...(this.age ? { age: this.age } : {}),
          ...(this.version ? { [this.version.header]: this.version.value } : {}),
        });
        res.end(file[0]);
      }, this.delayMs);
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  hitsOf(path: string): number {
    return this.hits.get(`/base${path}`) ?? 0;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

function get(edge: Edge, host: string, path: string, headers: Record<string, string> = {}): Promise<Answer> {
  const { port } = edge.server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { host, ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

async function size(body: Buffer): Promise<[number, number, string]> {
  const meta = await sharp(body).metadata();
  return [meta.width ?? 0, meta.height ?? 0, meta.format ?? ''];
}

// A 20x10 document: a black rectangle over its left half.
const drawing = Buffer.from(
  '<svg xmlns="http://www.w3.org/2000/svg" width="20" height="10">' +
    '<rect width="10" height="10" fill="#000"/></svg>',
);
/** An SVG that would load a picture from the origin itself, were references followed. */
const tracking = (port: number) =>
  Buffer.from(
    '<svg xmlns="http://www.w3.org/2000/svg" width="20" height="10">' +
      `<image href="http://127.0.0.1:${port}/base/images/pixel.png" width="20" height="10"/></svg>`,
  );

let server: TestServer;
let origin: LocalOrigin;
let client: Client;
let organizationId: number;
const edges: Edge[] = [];

async function startEdge(
  config: Partial<TestServer['deps']['config']> = {},
  options: Partial<EdgeOptions> = {},
) {
  const edge = await createEdge(
    { ...server.deps, config: { ...server.deps.config, ALLOW_PRIVATE_ORIGINS: true, ...config } },
    {
      cacheDir: mkdtempSync(join(tmpdir(), 'ukiyo-edge-')),
      originPollMs: 60_000,
      meteringFlushMs: 60_000,
      ...options,
    },
  );
  await new Promise<void>((resolve) => edge.server.listen(0, '127.0.0.1', resolve));
  edges.push(edge);
  return edge;
}

type OriginBody = { originID: number; name: string; status: number; statusMessage: string };

async function addOrigin(
  overrides: Record<string, unknown> = {},
  config: Record<string, unknown> = {},
): Promise<OriginBody> {
  const result = await client.call('origin.add', {
    origin: {
      kind: OriginKind.http,
      defaultCache: 3600,
      config: {
        scheme: 'http',
        host: `127.0.0.1:${origin.port}`,
        pathPrefix: 'base',
        rewriteHost: '',
        ...config,
      },
      ...overrides,
    },
  });
  expect(result.status, JSON.stringify(result.body)).toBe(200);
  return result.body.origin as OriginBody;
}

let edge: Edge;
let plain: OriginBody;

beforeAll(async () => {
  photo = await sharp({ create: { width: 800, height: 600, channels: 3, background: '#3080c0' } })
    .jpeg()
    .toBuffer();
  logo = await sharp({
    create: { width: 100, height: 100, channels: 4, background: { r: 255, g: 0, b: 0, alpha: 0.5 } },
  })
    .png()
    .toBuffer();
  bomb = await sharp({ create: { width: 12000, height: 12000, channels: 3, background: '#000' } })
    .png({ compressionLevel: 9, palette: true })
    .toBuffer();
  const frame = (background: string) =>
    sharp({ create: { width: 200, height: 100, channels: 3, background } })
      .png()
      .toBuffer();
  animation = await sharp(await Promise.all(['#ff0000', '#00ff00', '#0000ff'].map(frame)), {
    join: { animated: true },
  })
    .gif({ delay: [100, 200, 300], loop: 2 })
    .toBuffer();
  origin = new LocalOrigin();
  await origin.start();
  server = await testServer();
  const tenant = await createTenant(server.deps);
  organizationId = tenant.organizationIds[0]!;
  const { email } = await createTestUser(server.deps, {
    accountId: tenant.accountId,
    permission: Permission.origin | Permission.statistics,
  });
  client = await loggedIn(server.baseUrl, email);
  plain = await addOrigin();
  edge = await startEdge({}, { maxInputPixels: 50_000_000 });
});

afterAll(async () => {
  for (const started of edges) await started.close();
  await origin?.close();
});

describe('serving an HTTP origin', () => {
  it('marks a loaded origin Applied and answers unknown hosts with 404', async () => {
    const got = await client.call('origin.get', { originID: plain.originID });
    expect((got.body.origin as OriginBody).status).toBe(OriginStatus.applied);
    const unknown = await get(edge, 'nobody.img.localhost', '/images/photo.jpg');
    expect(unknown.status).toBe(404);
    expect(unknown.body.toString()).toBe('unknown host\n');
    // The kind is a code for the console and scripts; pages may read it across origins.
    expect(unknown.headers['ukiyo-error']).toBe('unknown-host');
    expect(unknown.headers['access-control-expose-headers']).toContain('Ukiyo-Error');
  });

  it('finds the origin however the client wrote its host: capitals, a port, the trailing dot', async () => {
    for (const host of [
      plain.name.toUpperCase(),
      `${plain.name}:80`,
      `${plain.name}.`,
      `${plain.name}.:80`,
    ]) {
      const answer = await get(edge, host, '/w=40/images/photo.jpg');
      expect(answer.status, host).toBe(200);
    }
  });

  it('refuses a parameter out of its range with 400, naming it', async () => {
    const answer = await get(edge, plain.name, '/blur=1000x1000/images/photo.jpg');
    expect(answer.status).toBe(400);
    expect(answer.body.toString()).toContain('blur');
    expect(answer.headers['ukiyo-error']).toBe('bad-parameter');
  });

  it('serves the image as the origin has it without parameters', async () => {
    const answer = await get(edge, plain.name, '/images/photo.jpg');
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe('image/jpeg');
    expect(await size(answer.body)).toEqual([800, 600, 'jpeg']);
  });

  it('applies every geometry mode, with and without u=0', async () => {
    const cases: Array<[string, [number, number]]> = [
      ['w=200,h=200,a=0', [200, 150]],
      ['w=200,h=200,a=1', [200, 200]],
      ['w=200,h=200,a=2', [200, 200]],
      ['w=200,h=200,a=3', [200, 200]],
      ['w=1000,h=1000,a=0', [1000, 750]],
      ['w=1000,h=1000,a=0,u=0', [800, 600]],
      ['w=1000,h=1000,a=1', [1000, 1000]],
      ['w=1000,h=1000,a=2,u=0', [800, 600]],
      ['w=1000,a=0,u=0', [800, 600]],
      ['w=100,dpr=2', [200, 150]],
    ];
    for (const [params, expected] of cases) {
      const answer = await get(edge, plain.name, `/${params}/images/photo.jpg`);
      expect(answer.status, params).toBe(200);
      expect((await size(answer.body)).slice(0, 2), params).toEqual(expected);
    }
  });

  it('converts to every output format and negotiates webp:X / avif:X by Accept', async () => {
    const formats: Array<[string, string, string]> = [
      ['jpg', 'image/jpeg', 'jpeg'],
      ['png', 'image/png', 'png'],
      ['gif', 'image/gif', 'gif'],
      ['webp', 'image/webp', 'webp'],
      ['avif', 'image/avif', 'heif'],
    ];
    for (const [f, type, format] of formats) {
      const answer = await get(edge, plain.name, `/w=64,f=${f}/images/photo.jpg`);
      expect(answer.headers['content-type'], f).toBe(type);
      expect((await size(answer.body))[2], f).toBe(format);
      expect(answer.headers.vary).toBeUndefined();
    }
    const webp = await get(edge, plain.name, '/w=64,f=webp:jpg/images/photo.jpg', {
      accept: 'image/webp,*/*',
    });
    expect(webp.headers['content-type']).toBe('image/webp');
    expect(webp.headers.vary).toBe('Accept');
    const fallback = await get(edge, plain.name, '/w=64,f=webp:jpg/images/photo.jpg', { accept: '*/*' });
    expect(fallback.headers['content-type']).toBe('image/jpeg');
    expect(fallback.headers.vary).toBe('Accept');
    const avif = await get(edge, plain.name, '/w=64,f=avif:png/images/photo.jpg', { accept: 'image/avif' });
    expect(avif.headers['content-type']).toBe('image/avif');
    const avifFallback = await get(edge, plain.name, '/w=64,f=avif:png/images/photo.jpg');
    expect(avifFallback.headers['content-type']).toBe('image/png');
  });

  it('clips, rotates and composes overlays', async () => {
    const clipped = await get(edge, plain.name, '/ic=0:0:400:300/images/photo.jpg');
    expect((await size(clipped.body)).slice(0, 2)).toEqual([400, 300]);
    const ratio = await get(edge, plain.name, '/c/icr=0:0:0.5:0.5,w=100/images/photo.jpg');
    expect((await size(ratio.body)).slice(0, 2)).toEqual([100, 75]);
    const output = await get(edge, plain.name, '/w=400,c=0:0:100:50/images/photo.jpg');
    expect((await size(output.body)).slice(0, 2)).toEqual([100, 50]);
    const rotated = await get(edge, plain.name, '/or=6/images/photo.jpg');
    expect((await size(rotated.body)).slice(0, 2)).toEqual([600, 800]);
    const overlaid = await get(edge, plain.name, '/w=300,l=(w=50,g=9%2fimages%2flogo.png)/images/photo.jpg');
    expect(overlaid.status, overlaid.body.toString()).toBe(200);
    expect((await size(overlaid.body)).slice(0, 2)).toEqual([300, 225]);
    const missingOverlay = await get(
      edge,
      plain.name,
      '/w=300,l=(w=50%2fimages%2fnone.png)/images/photo.jpg',
    );
    expect(missingOverlay.status).toBe(422);
  });

  it('refuses bad input with 4xx and a short reason, never a 500', async () => {
    const cases: Array<[string, number]> = [
      ['/zz=1/images/photo.jpg', 400],
      ['/w=-1/images/photo.jpg', 400],
      ['/a=9/images/photo.jpg', 400],
      ['/w=(/images/photo.jpg', 400],
      ['/images/%E0%A4%A.jpg', 400],
      ['/w=10/images/../secret.jpg', 400],
      ['/images/missing.jpg', 404],
      ['/images/not-an-image.jpg', 422],
      ['/t=(text=hi)/images/photo.jpg', 403],
    ];
    for (const [path, status] of cases) {
      const answer = await get(edge, plain.name, path);
      expect(answer.status, `${path} ${answer.body.toString()}`).toBe(status);
      expect(answer.headers['content-type']).toBe('text/plain; charset=utf-8');
      expect(answer.body.length).toBeLessThan(200);
    }
  });

  it('refuses a decompression bomb from its header', async () => {
    const answer = await get(edge, plain.name, '/w=10/images/bomb.png');
    expect(answer.status).toBe(422);
  });

  it('follows redirects of the origin', async () => {
    const answer = await get(edge, plain.name, '/w=80/images/moved.jpg');
    expect(answer.status).toBe(200);
    expect((await size(answer.body))[0]).toBe(80);
  });
});

describe('origin rules, signatures and expiry', () => {
  it('serves a rule pattern as its parameters on its path, overriding only what is allowed', async () => {
    const ruled = await addOrigin({
      conversionParameters: [
        { pattern: 'thumbs/', path: 'images/', parameter: 'w=100,f=png' },
        { pattern: 'fixed/', path: 'images/', parameter: 'w=120', disallowOverride: true },
      ],
      overridableParameters: 'w',
    });
    await edge.refreshOrigins();
    const thumb = await get(edge, ruled.name, '/thumbs/photo.jpg');
    expect(await size(thumb.body)).toEqual([100, 75, 'png']);
    const overridden = await get(edge, ruled.name, '/w=50,f=jpg/thumbs/photo.jpg');
    expect(await size(overridden.body)).toEqual([50, 38, 'png']);
    const fixed = await get(edge, ruled.name, '/w=50/fixed/photo.jpg');
    expect((await size(fixed.body))[0]).toBe(120);
  });

  it('requires a valid signature in the parameter or the header, and honours expires', async () => {
    const secret = 'testsigningsecret';
    const signed = await addOrigin({ enableSignedUrl: true, signingSecret: secret });
    await edge.refreshOrigins();
    expect((await get(edge, signed.name, '/w=100/images/photo.jpg')).status).toBe(403);
    expect((await get(edge, signed.name, signPath(secret, '/w=100/images/photo.jpg'))).status).toBe(200);
    expect((await get(edge, signed.name, signPath('other', '/w=100/images/photo.jpg'))).status).toBe(403);
    const headerSigned = signPath(secret, '/c/w=100/images/photo.jpg');
    const signature = /sig=([^,/]+)/.exec(headerSigned)![1]!;
    expect(
      (await get(edge, signed.name, '/c/w=100/images/photo.jpg', { 'x-imageflux-signature': signature }))
        .status,
    ).toBe(200);
    const past = formatExpires(Math.floor(Date.now() / 1000) - 10);
    const expired = await get(edge, signed.name, signPath(secret, `/w=100,expires=${past}/images/photo.jpg`));
    expect(expired.status).toBe(403);
    expect(expired.body.toString()).toBe('expired\n');
    expect(expired.headers['ukiyo-error']).toBe('expired');
    const soon = Math.floor(Date.now() / 1000) + 120;
    const live = await get(
      edge,
      signed.name,
      signPath(secret, `/w=100,expires=${formatExpires(soon)}/images/photo.jpg`),
    );
    expect(live.status).toBe(200);
    const maxAge = Number(/max-age=(\d+)/.exec(String(live.headers['cache-control']))![1]);
    expect(maxAge).toBeGreaterThan(100);
    expect(maxAge).toBeLessThanOrEqual(120);
  });
});

describe('the cache', () => {
  it('answers repeats from the cache with ETag / 304 and Cache-Control from defaultCache', async () => {
    const path = '/w=150,q=70/images/photo.jpg';
    await edge.purge(plain.originID, '/images/photo.jpg'); // also forgets the recent original
    const before = origin.hitsOf('/images/photo.jpg');
    const first = await get(edge, plain.name, path);
    expect(first.headers['x-cache']).toBe('MISS');
    expect(first.headers['cache-control']).toBe('public, max-age=3600');
    const second = await get(edge, plain.name, path);
    expect(second.headers['x-cache']).toBe('HIT');
    expect(second.body.equals(first.body)).toBe(true);
    expect(origin.hitsOf('/images/photo.jpg')).toBe(before + 1);
    const notModified = await get(edge, plain.name, path, { 'if-none-match': String(first.headers.etag) });
    expect(notModified.status).toBe(304);
    expect(notModified.body.length).toBe(0);
    // Same meaning, different spelling: the same variant.
    const respelled = await get(edge, plain.name, '/c/q=70,w=150/images/photo.jpg');
    expect(respelled.headers['x-cache']).toBe('HIT');
  });

  it.each([
    ['etag', '"v1"', '"v2"'],
    ['last-modified', 'Wed, 01 Jan 2025 00:00:00 GMT', 'Thu, 02 Jan 2025 00:00:00 GMT'],
  ] as const)(
    "asks the origin whether a stale variant's original changed (%s): 304 serves the copy, a new version is converted",
    async (header, first, second) => {
      // `no-cache`: every copy is stale at once, so each request asks the origin.
      origin.cacheControl = 'no-cache';
      origin.version = { header, value: first };
      await edge.purge(plain.originID, '/images/photo.jpg'); // also forgets the recent original
      try {
        const path = '/w=161/images/photo.jpg';
        const fetched = () => origin.hitsOf('/images/photo.jpg');
        const before = { fetched: fetched(), notModified: origin.notModified };
        const made = await get(edge, plain.name, path);
        expect(made.headers['x-cache']).toBe('MISS');
        const again = await Promise.all([get(edge, plain.name, path), get(edge, plain.name, path)]);
        // One conditional request for both, answered 304: the copy is served, not converted again.
        expect(fetched()).toBe(before.fetched + 2);
        expect(origin.notModified).toBe(before.notModified + 1);
        expect(again.every(({ body }) => body.equals(made.body))).toBe(true);
        expect(again.map(({ headers }) => headers['x-cache'])).toEqual(['HIT', 'HIT']);
        expect(again[0]!.headers['cache-control']).toBe('no-cache');
        // Still stale (no-cache): the next request asks again, with the same version.
        expect((await get(edge, plain.name, path)).headers['x-cache']).toBe('HIT');
        expect(origin.notModified).toBe(before.notModified + 2);

        origin.version = { header, value: second };
        const changed = await get(edge, plain.name, path);
        expect(changed.headers['x-cache']).toBe('MISS');
        expect(origin.notModified).toBe(before.notModified + 2);
        expect((await get(edge, plain.name, path)).headers['x-cache']).toBe('HIT');
        expect(origin.notModified).toBe(before.notModified + 3);

        // A 304 that gives freshness makes the copy fresh: later requests do not ask.
        origin.cacheControl = 'max-age=60';
        expect((await get(edge, plain.name, path)).headers['cache-control']).toBe('public, max-age=60');
        expect(origin.notModified).toBe(before.notModified + 4);
        const fresh = await get(edge, plain.name, path);
        expect(fresh.headers['x-cache']).toBe('HIT');
        expect(fresh.headers['cache-control']).toMatch(/^public, max-age=(59|60)$/);
        expect(origin.notModified).toBe(before.notModified + 4);
      } finally {
        origin.cacheControl = null;
        origin.version = null;
      }
    },
  );

  it.skipIf(!nginxInstalled)(
    'revalidates against nginx: its own ETag asked with If-None-Match, its 304 answered from the copy',
    async () => {
      const nginx = await startNginxOrigin();
      try {
        nginx.put('photo.jpg', photo);
        // nginx sends no Cache-Control: with defaultCache 0 every copy is stale at once.
        const served = await addOrigin(
          { defaultCache: 0 },
          { host: `127.0.0.1:${nginx.port}`, pathPrefix: '' },
        );
        await edge.refreshOrigins();
        const path = '/w=70/photo.jpg';
        const made = await get(edge, served.name, path);
        expect(made.headers['x-cache']).toBe('MISS');
        const again = await get(edge, served.name, path);
        expect(again.headers['x-cache']).toBe('HIT');
        expect(again.body.equals(made.body)).toBe(true);
        // nginx's ETag is its file's mtime and size in hex.
        expect(await nginx.requests(2)).toEqual([
          '200',
          expect.stringMatching(/^304 "[0-9a-f]+-[0-9a-f]+"$/),
        ]);
        // Another file under the name: another ETag, a 200, converted afresh.
        nginx.put('photo.jpg', logo);
        const changed = await get(edge, served.name, path);
        expect(changed.headers['x-cache']).toBe('MISS');
        expect(await size(changed.body)).toEqual([70, 70, 'png']);
        expect((await nginx.requests(3))[2]).toMatch(/^200 "[0-9a-f]+-[0-9a-f]+"$/);
      } finally {
        nginx.close();
      }
    },
  );

  it("takes an original fetched in the last seconds for the origin's answer to a stale variant of its version", async () => {
    // Two seconds: the original fetched for the new width is held that long, ample for the next request.
    origin.cacheControl = 'max-age=2';
    origin.version = { header: 'etag', value: '"v1"' };
    await edge.purge(plain.originID, '/images/photo.jpg');
    try {
      const fetched = () => origin.hitsOf('/images/photo.jpg');
      const before = { fetched: fetched(), notModified: origin.notModified };
      expect((await get(edge, plain.name, '/w=171/images/photo.jpg')).headers['x-cache']).toBe('MISS');
      await new Promise((resolve) => setTimeout(resolve, 2_100));
      // A srcset's new width fetches the original; the stale width of the same version is its copy.
      expect((await get(edge, plain.name, '/w=172/images/photo.jpg')).headers['x-cache']).toBe('MISS');
      expect((await get(edge, plain.name, '/w=171/images/photo.jpg')).headers['x-cache']).toBe('HIT');
      expect(fetched()).toBe(before.fetched + 2);
      expect(origin.notModified).toBe(before.notModified);
    } finally {
      origin.cacheControl = null;
      origin.version = null;
    }
  });

  it('coalesces concurrent identical misses into one origin fetch', async () => {
    origin.delayMs = 200;
    await edge.purge(plain.originID, '/images/photo.jpg');
    const before = origin.hitsOf('/images/photo.jpg');
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => get(edge, plain.name, '/w=333/images/photo.jpg')),
    );
    origin.delayMs = 0;
    expect(answers.every((answer) => answer.status === 200)).toBe(true);
    expect(origin.hitsOf('/images/photo.jpg')).toBe(before + 1);
    expect(new Set(answers.map((answer) => answer.headers.etag)).size).toBe(1);
  });

  it('fetches an original once for the several widths a srcset asks at once, again after a purge', async () => {
    const heldBytes = async () =>
      (await edge.metrics.getSingleMetric('ukiyo_edge_source_cache_bytes')!.get()).values[0]!.value;
    await edge.purge(plain.originID, '/images/photo.jpg');
    const before = origin.hitsOf('/images/photo.jpg');
    for (const w of [320, 640, 960]) {
      expect((await get(edge, plain.name, `/w=${w}/images/photo.jpg`)).status).toBe(200);
    }
    expect(origin.hitsOf('/images/photo.jpg')).toBe(before + 1);
    const held = await heldBytes();
    expect(held).toBeGreaterThanOrEqual(photo.length);
    await edge.purge(plain.originID, '/images/photo.jpg');
    expect(await heldBytes()).toBeLessThan(held);
    await get(edge, plain.name, '/w=321/images/photo.jpg');
    expect(origin.hitsOf('/images/photo.jpg')).toBe(before + 2);
  });

  it('looks up and purges every variant of one image URL', async () => {
    await get(edge, plain.name, '/w=41/images/logo.png');
    await get(edge, plain.name, '/w=42,f=webp/images/logo.png');
    const url = `http://${plain.name}/w=999/images/logo.png`;
    const listed = await edge.lookup(plain.originID, url);
    expect(listed).toEqual([
      `http://${plain.name}/w=41/images/logo.png`,
      `http://${plain.name}/w=42,f=webp/images/logo.png`,
    ]);
    expect(await edge.purge(plain.originID, '/images/logo.png')).toEqual(listed);
    expect(await edge.lookup(plain.originID, url)).toEqual([]);
    expect((await get(edge, plain.name, '/w=41/images/logo.png')).headers['x-cache']).toBe('MISS');
    expect(await edge.lookup(999_999_999, url)).toEqual([]);
  });

  it('serves a stale copy when the origin fails and honours origin cache headers', async () => {
    const shortLived = await addOrigin({ defaultCache: 0 });
    await edge.refreshOrigins();
    const first = await get(edge, shortLived.name, '/w=77/images/photo.jpg');
    expect(first.headers['cache-control']).toBe('no-cache');
    origin.failing = true;
    const stale = await get(edge, shortLived.name, '/w=77/images/photo.jpg');
    const uncached = await get(edge, shortLived.name, '/w=78/images/photo.jpg');
    origin.failing = false;
    expect(stale.status).toBe(200);
    expect(stale.headers['x-cache']).toBe('STALE');
    expect(uncached.status).toBe(502);
    origin.cacheControl = 'max-age=60';
    const fromOrigin = await get(edge, shortLived.name, '/w=79/images/photo.jpg');
    // The original changed its headers: purged, as a customer does after changing it.
    origin.cacheControl = 'no-store';
    await edge.purge(shortLived.originID, '/images/photo.jpg');
    const noStore = await get(edge, shortLived.name, '/w=80/images/photo.jpg');
    origin.cacheControl = null;
    expect(fromOrigin.headers['cache-control']).toBe('public, max-age=60');
    expect(noStore.headers['cache-control']).toBe('no-store');
    expect(await edge.lookup(shortLived.originID, '/images/photo.jpg')).not.toContain(
      `http://${shortLived.name}/w=80/images/photo.jpg`,
    );
  });

  it('serves a stale copy only as long as stale-if-error allows, never under must-revalidate', async () => {
    const bounded = await addOrigin({ defaultCache: 0 });
    await edge.refreshOrigins();
    origin.cacheControl = 'max-age=0, stale-if-error=2';
    await get(edge, bounded.name, '/w=81/images/photo.jpg');
    origin.cacheControl = 'max-age=0, must-revalidate';
    await get(edge, bounded.name, '/w=82/images/photo.jpg');
    origin.cacheControl = null;
    origin.failing = true;
    try {
      expect((await get(edge, bounded.name, '/w=81/images/photo.jpg')).headers['x-cache']).toBe('STALE');
      expect((await get(edge, bounded.name, '/w=82/images/photo.jpg')).status).toBe(502);
      await new Promise((resolve) => setTimeout(resolve, 2_100));
      expect((await get(edge, bounded.name, '/w=81/images/photo.jpg')).status).toBe(502);
    } finally {
      origin.failing = false;
    }
  });

  it("counts the origin's Age against its freshness", async () => {
    await edge.purge(plain.originID, '/images/photo.jpg'); // the recent original had other headers
    origin.cacheControl = 'max-age=600';
    origin.age = '500';
    try {
      const answer = await get(edge, plain.name, '/w=83/images/photo.jpg');
      expect(answer.headers['cache-control']).toMatch(/^public, max-age=(99|100)$/);
    } finally {
      origin.cacheControl = null;
      origin.age = null;
    }
  });

  it('keeps the cache within its size, evicting the least recently used', async () => {
    const small = await startEdge({}, { cacheMaxBytes: 2000 });
    for (const w of [30, 31, 32, 33, 34, 35, 36, 37])
      await get(small, plain.name, `/w=${w}/images/photo.jpg`);
    const kept = await small.lookup(plain.originID, '/images/photo.jpg');
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.length).toBeLessThan(8);
    expect(kept).toContain(`http://${plain.name}/w=37/images/photo.jpg`);
  });
});

describe('access control and the SSRF guard', () => {
  it('applies allow and deny lists to the client address, X-Forwarded-For only behind a trusted proxy', async () => {
    const allowOnly = await addOrigin({ acl: { isAllowList: true, cidrs: ['10.0.0.0/8'] } });
    const denyLocal = await addOrigin({ acl: { isAllowList: false, cidrs: ['127.0.0.0/8', '::1'] } });
    await edge.refreshOrigins();
    expect((await get(edge, allowOnly.name, '/images/photo.jpg')).status).toBe(403);
    expect((await get(edge, denyLocal.name, '/images/photo.jpg')).status).toBe(403);
    expect(
      (await get(edge, allowOnly.name, '/images/photo.jpg', { 'x-forwarded-for': '10.1.2.3' })).status,
    ).toBe(403);
    const proxied = await startEdge({ TRUST_PROXY: true });
    expect(
      (await get(proxied, allowOnly.name, '/images/photo.jpg', { 'x-forwarded-for': '10.1.2.3' })).status,
    ).toBe(200);
    expect(
      (await get(proxied, allowOnly.name, '/images/photo.jpg', { 'x-forwarded-for': '10.1.2.3, 192.0.2.1' }))
        .status,
    ).toBe(403);
    expect(
      (await get(proxied, denyLocal.name, '/images/photo.jpg', { 'x-forwarded-for': '192.0.2.1' })).status,
    ).toBe(200);
  });

  it('refuses loopback and private origins unless ALLOW_PRIVATE_ORIGINS=1', async () => {
    const guarded = await startEdge({ ALLOW_PRIVATE_ORIGINS: false });
    const literal = await get(guarded, plain.name, '/w=10/images/photo.jpg');
    expect(literal.status).toBe(502);
    // A generic reason: the address the origin resolved to is logged, never shown to clients.
    expect(literal.body.toString()).toBe('the origin address is not allowed\n');
    expect(literal.headers['ukiyo-error']).toBe('origin-forbidden');
    expect(literal.headers['x-content-type-options']).toBe('nosniff');
    const named = await addOrigin({}, { host: `localhost:${origin.port}` });
    const metadata = await addOrigin({}, { host: '169.254.169.254' });
    await guarded.refreshOrigins();
    const resolved = await get(guarded, named.name, '/w=10/images/photo.jpg');
    expect(resolved.status).toBe(502);
    expect(resolved.body.toString()).toBe('the origin address is not allowed\n');
    expect((await get(guarded, metadata.name, '/images/x.jpg')).status).toBe(502);
    expect(origin.hitsOf('/images/x.jpg')).toBe(0);
  });
});

describe('S3 origins', () => {
  let s3rver: S3rver;
  let s3: S3Client;
  let endPoint: string;

  beforeAll(async () => {
    s3rver = new S3rver({
      port: 0,
      address: '127.0.0.1',
      silent: true,
      directory: mkdtempSync(join(tmpdir(), 'ukiyo-s3-')),
    });
    const address = (await s3rver.run()) as AddressInfo;
    endPoint = `http://127.0.0.1:${address.port}`;
    s3 = new S3Client({
      endpoint: endPoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    });
    await s3.send(new CreateBucketCommand({ Bucket: 'pictures' }));
    await s3.send(new PutObjectCommand({ Bucket: 'pictures', Key: 'prefix/dir/photo one.jpg', Body: photo }));
  });

  afterAll(async () => {
    s3.destroy();
    await s3rver.close();
  });

  /** An origin of the `pictures` bucket under `pathPrefix`, loaded by the edge. */
  const picturesOrigin = async (pathPrefix: string, overrides: Record<string, unknown> = {}) => {
    const added = await addOrigin({
      kind: OriginKind.s3,
      config: {
        accessKeyID: 'S3RVER',
        secretAccessKey: 'S3RVER',
        endPoint,
        region: 'us-east-1',
        bucket: 'pictures',
        pathPrefix,
      },
      ...overrides,
    });
    await edge.refreshOrigins();
    return added;
  };

  it('fetches through SigV4 with a path-style custom endpoint and pathPrefix', async () => {
    const bucketOrigin = await picturesOrigin('/prefix/');
    const answer = await get(edge, bucketOrigin.name, '/w=120,f=webp/dir/photo%20one.jpg');
    expect(answer.status, answer.body.toString()).toBe(200);
    expect(await size(answer.body)).toEqual([120, 90, 'webp']);
    expect((await get(edge, bucketOrigin.name, '/dir/missing.jpg')).status).toBe(404);
    const guarded = await startEdge({ ALLOW_PRIVATE_ORIGINS: false });
    expect((await get(guarded, bucketOrigin.name, '/dir/photo%20one.jpg')).status).toBe(502);
  });

  it("asks the bucket whether a stale variant's object changed (If-None-Match on its ETag)", async () => {
    const put = (body: Buffer) =>
      s3.send(new PutObjectCommand({ Bucket: 'pictures', Key: 'fresh/photo.jpg', Body: body }));
    await put(photo);
    // defaultCache 0: every copy is stale at once, so each request asks the bucket.
    const bucketOrigin = await picturesOrigin('fresh', { defaultCache: 0 });
    const first = await get(edge, bucketOrigin.name, '/w=50/photo.jpg');
    expect(first.headers['x-cache']).toBe('MISS');
    const again = await get(edge, bucketOrigin.name, '/w=50/photo.jpg');
    expect(again.headers['x-cache']).toBe('HIT');
    expect(again.body.equals(first.body)).toBe(true);
    // Another object under the key: another ETag, converted afresh.
    await put(logo);
    expect((await get(edge, bucketOrigin.name, '/w=50/photo.jpg')).headers['x-cache']).toBe('MISS');
  });

  it('marks an origin Error, with the reason, when the edge cannot load it', async () => {
    const broken = await addOrigin({
      kind: OriginKind.s3,
      config: {
        accessKeyID: 'S3RVER',
        secretAccessKey: 'S3RVER',
        endPoint,
        region: '',
        bucket: 'pictures',
        pathPrefix: '',
      },
    });
    await server.deps.db
      .updateTable('origins')
      .set({
        config: JSON.stringify({
          accessKeyID: 'S3RVER',
          secretAccessKeyEnc: 'v1.AAAA.AAAA',
          bucket: 'pictures',
          endPoint,
        }),
      })
      .where('id', '=', broken.originID)
      .execute();
    await edge.refreshOrigins();
    const got = (await client.call('origin.get', { originID: broken.originID })).body.origin as OriginBody;
    expect(got.status).toBe(OriginStatus.error);
    expect(got.statusMessage).toBe('originStatus.s3SecretUnreadable');
    expect((await get(edge, broken.name, '/x.jpg')).status).toBe(404);
  });

  it('shares variants between edges through a result cache bucket, and purges them there', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'results' }));
    const sharedTier = {
      endpoint: endPoint,
      bucket: 'results',
      region: '',
      accessKeyId: 'S3RVER',
      secretAccessKey: 'S3RVER',
      prefix: 'it',
      timeoutMs: 3_000,
    };
    const objects = async () =>
      (await s3.send(new ListObjectsV2Command({ Bucket: 'results', Prefix: `it/${plain.originID}/` })))
        .KeyCount ?? 0;
    const transforms = async (one: Edge) =>
      Number(
        /_count(?:\{[^}]*\})? (\d+)/.exec(
          await one.metrics.getSingleMetricAsString('ukiyo_edge_transform_duration_seconds'),
        )?.[1] ?? 0,
      );
    const [first, second] = [await startEdge({}, { sharedTier }), await startEdge({}, { sharedTier })];
    const path = '/w=64,f=png/images/logo.png';
    const made = await get(first, plain.name, path);
    expect(made.headers['x-cache']).toBe('MISS');
    for (let tries = 0; (await objects()) === 0; tries++) {
      expect(tries).toBeLessThan(100);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const served = await get(second, plain.name, path);
    expect(served.headers['x-cache']).toBe('HIT');
    expect(served.headers.etag).toBe(made.headers.etag);
    expect(served.headers['cache-tag']).toBe(made.headers['cache-tag']);
    expect(served.body.equals(made.body)).toBe(true);
    expect(await transforms(second)).toBe(0);
    await second.purge(plain.originID, '/images/logo.png');
    expect(await objects()).toBe(0);
    expect((await get(first, plain.name, path)).headers['x-cache']).toBe('HIT'); // its own copy
    expect((await get(second, plain.name, path)).headers['x-cache']).toBe('MISS');
  });
});

describe('usage metering', () => {
  it('adds requests and outbound bytes per origin to the hourly and daily tables', async () => {
    const metered = await addOrigin();
    await edge.refreshOrigins();
    const answers = [
      await get(edge, metered.name, '/w=50/images/photo.jpg'),
      await get(edge, metered.name, '/w=50/images/photo.jpg'),
      await get(edge, metered.name, '/zz=1/images/photo.jpg'),
    ];
    await edge.flushUsage();
    const bytes = answers.reduce((sum, answer) => sum + answer.body.length, 0);
    const hourly = await server.deps.db
      .selectFrom('usage_hourly')
      .selectAll()
      .where('origin_id', '=', metered.originID)
      .execute();
    expect(
      hourly.map((row) => [row.organization_id, Number(row.requests), Number(row.outbound_bytes)]),
    ).toEqual([[organizationId, 3, bytes]]);
    const listed = await client.call('origin.list', {});
    const usage = (listed.body.origins as Array<{ originID: number; usage: unknown }>).find(
      (entry) => entry.originID === metered.originID,
    )?.usage;
    expect(usage).toEqual({ requests: 3, outboundBytes: bytes });
  });

  it('splits answers by status and cache result and counts bytes saved, tops and errors (statistics.origins)', async () => {
    const counted = await addOrigin();
    const cacheDir = mkdtempSync(join(tmpdir(), 'ukiyo-edge-'));
    const [front, other] = [await startEdge({}, { cacheDir }), await startEdge({}, { cacheDir })];
    const webp = '/w=50,f=webp/images/photo.jpg';
    origin.delayMs = 200;
    const misses = await Promise.all([get(front, counted.name, webp), get(front, counted.name, webp)]);
    origin.delayMs = 0;
    const memory = await get(front, counted.name, webp);
    const notModified = await get(front, counted.name, webp, {
      'if-none-match': String(memory.headers.etag),
    });
    const png = await get(front, counted.name, '/w=40,f=png/images/logo.png');
    const refused = [
      await get(front, counted.name, '/zz=1/images/photo.jpg'),
      await get(front, counted.name, '/w=10/images/none.jpg'),
    ];
    const disk = await get(other, counted.name, webp);
    expect([...misses, memory, png, disk].map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200]);
    expect([notModified.status, ...refused.map((answer) => answer.status)]).toEqual([304, 400, 404]);
    await Promise.all([front.flushUsage(), other.flushUsage()]);

    const today = new Date(new Date().toISOString().slice(0, 10));
    const period = { from: today.toISOString(), to: new Date(today.getTime() + 86_400_000).toISOString() };
    const { body } = await client.call('statistics.origins', { ...period, originID: counted.originID });
    expect(body.error).toBeUndefined();
    const stats = (body.origins as Array<{ originID: number; stats: Record<string, unknown> }>).find(
      (entry) => entry.originID === counted.originID,
    )?.stats;
    const webpAnswers = [...misses, memory, disk];
    const delivered = [...webpAnswers, png].reduce((sum, answer) => sum + answer.body.length, 0);
    const originals = webpAnswers.length * photo.length + logo.length;
    expect(stats).toEqual({
      requests: 8,
      outboundBytes: delivered + refused.reduce((sum, answer) => sum + answer.body.length, 0),
      status: { ok: 5, notModified: 1, clientError: 2, serverError: 0 },
      cache: { memory: 2, disk: 1, shared: 0, miss: 2, coalesced: 1, stale: 0 },
      hitRatio: 0.5,
      originBytes: photo.length + logo.length,
      sourceBytes: originals,
      convertedBytes: delivered,
      savedBytes: originals - delivered,
    });
    const top = body.top as Record<string, Array<{ key: string; requests: number; bytes: number }>>;
    expect(top.paths!.map(({ key, requests }) => [key, requests])).toEqual([
      ['/images/photo.jpg', 5],
      ['/images/logo.png', 1],
    ]);
    expect(top.pathsByBytes![0]).toMatchObject({ key: '/images/photo.jpg', bytes: memory.body.length * 4 });
    expect(top.transforms!.map(({ key, requests }) => [key, requests])).toEqual([
      ['w=50,f=webp', 5],
      ['w=40,f=png', 1],
    ]);
    expect(top.formats!.map(({ key, requests }) => [key, requests])).toEqual([
      ['webp', 5],
      ['png', 1],
    ]);
    expect(top.errors!.map(({ key, requests }) => [key, requests])).toEqual([
      ['bad-parameter', 1],
      ['origin-not-found', 1],
    ]);
    const hourly = await client.call('statistics.origins', { ...period, granularity: 'hour' });
    expect(hourly.status).toBe(200);
    expect(
      (hourly.body.hourly as Array<{ requests: number }>).reduce((sum, hour) => sum + hour.requests, 0),
    ).toBe((body.total as { requests: number }).requests);
  });

  it('keeps top lists bounded whatever the URLs, totals exact, and a failed write for the next', async () => {
    const counted = await addOrigin();
    const metering = new Metering(server.deps.db, server.deps.log);
    const distinct = TOP_KEYS_PER_FLUSH + 100;
    for (let i = 0; i < distinct; i++)
      metering.record(counted.originID, organizationId, { status: 200, bytes: 10, path: `/p${i}.jpg` });
    await metering.flush();
    const rows = () =>
      server.deps.db
        .selectFrom('usage_top_daily')
        .select(({ fn }) => fn.countAll<number>().as('rows'))
        .where('origin_id', '=', counted.originID)
        .executeTakeFirstOrThrow();
    const requests = async () =>
      (
        await server.deps.db
          .selectFrom('usage_hourly')
          .select('requests')
          .where('origin_id', '=', counted.originID)
          .execute()
      ).reduce((sum, row) => sum + Number(row.requests), 0);
    expect(Number((await rows()).rows)).toBe(TOP_ROWS_KEPT);
    expect(await requests()).toBe(distinct);

    // The database refusing a batch: its rows wait for the next write, counted once.
    metering.record(counted.originID, organizationId, { status: 200, bytes: 10 });
    await sql`alter table usage_hourly rename to usage_hourly_away`.execute(server.deps.db);
    await metering.flush();
    await sql`alter table usage_hourly_away rename to usage_hourly`.execute(server.deps.db);
    expect(await requests()).toBe(distinct);
    await metering.flush();
    expect(await requests()).toBe(distinct + 1);
  });
});

describe('image inputs and negotiation (issue 14)', () => {
  it('walks an f= fallback chain by Accept, caching each choice apart', async () => {
    const path = '/w=64,f=avif:webp:jpg/images/photo.jpg';
    const clients = [
      ['image/avif,image/webp,*/*', 'image/avif'],
      ['image/webp,*/*', 'image/webp'],
      ['*/*', 'image/jpeg'],
    ] as const;
    for (const [accept, type] of clients) {
      const answer = await get(edge, plain.name, path, { accept });
      expect(answer.status).toBe(200);
      expect(answer.headers['content-type']).toBe(type);
      expect(answer.headers.vary).toBe('Accept');
      expect(answer.headers['x-cache']).toBe('MISS');
    }
    // Each client gets its own cached variant back, never another's.
    for (const [accept, type] of [...clients].reverse()) {
      const answer = await get(edge, plain.name, path, { accept });
      expect([answer.headers['x-cache'], answer.headers['content-type']]).toEqual(['HIT', type]);
      expect((await size(answer.body))[0]).toBe(64);
    }
    const bounded = await get(edge, plain.name, '/f=avif:webp:png:gif:jpg:auto/images/photo.jpg');
    expect(bounded.status).toBe(400);
    expect(bounded.body.toString()).toContain('at most 5');
  });

  it('keeps the new origin settings off unless set', async () => {
    const got = await client.call('origin.get', { originID: plain.originID });
    expect(got.body.origin).toMatchObject({ enableClientHints: false, allowSvg: false });
    const answer = await get(edge, plain.name, '/images/photo.jpg', {
      'sec-ch-width': '300',
      'sec-ch-dpr': '2',
    });
    expect(await size(answer.body)).toEqual([800, 600, 'jpeg']);
    expect(answer.headers['accept-ch']).toBeUndefined();
    expect(answer.headers.vary).toBeUndefined();
  });

  it('honours DPR and Width client hints where the origin enables them', async () => {
    const hinted = await addOrigin({ enableClientHints: true });
    expect(hinted).toMatchObject({ enableClientHints: true });
    await edge.refreshOrigins();
    const wide = await get(edge, hinted.name, '/q=70/images/photo.jpg', { 'sec-ch-width': '290' });
    expect(await size(wide.body)).toEqual([300, 225, 'jpeg']);
    expect(wide.headers['accept-ch']).toBe('Sec-CH-DPR, Sec-CH-Width, DPR, Width');
    expect(wide.headers.vary).toBe('Sec-CH-Width, Width');
    const dense = await get(edge, hinted.name, '/w=100,f=webp:jpg/images/photo.jpg', {
      dpr: '2',
      accept: '*/*',
    });
    expect(await size(dense.body)).toEqual([200, 150, 'jpeg']);
    expect(dense.headers.vary).toBe('Accept, Sec-CH-DPR, DPR');
    // The hint keys the variant: no hint is a variant of its own, and the URL's dpr wins.
    const plainDpr = await get(edge, hinted.name, '/w=100,f=webp:jpg/images/photo.jpg', { accept: '*/*' });
    expect([plainDpr.headers['x-cache'], (await size(plainDpr.body))[0]]).toEqual(['MISS', 100]);
    const again = await get(edge, hinted.name, '/w=100,f=webp:jpg/images/photo.jpg', {
      dpr: '2.04',
      accept: '*/*',
    });
    expect([again.headers['x-cache'], (await size(again.body))[0]]).toEqual(['HIT', 200]);
    const fixed = await get(edge, hinted.name, '/w=100,dpr=3/images/photo.jpg', { dpr: '2' });
    expect((await size(fixed.body))[0]).toBe(300);
    expect(fixed.headers.vary).toBeUndefined();
    expect(fixed.headers['accept-ch']).toBe('Sec-CH-DPR, Sec-CH-Width, DPR, Width');
  });

  it('rasterises SVG only for origins that allow it, never following its references', async () => {
    const refused = await get(edge, plain.name, '/w=200/images/drawing.svg');
    expect([refused.status, refused.headers['ukiyo-error']]).toEqual([422, 'unsupported-format']);
    const svgOrigin = await addOrigin({ allowSvg: true });
    await edge.refreshOrigins();
    const drawn = await get(edge, svgOrigin.name, '/w=200/images/drawing.svg');
    expect(drawn.status).toBe(200);
    expect(drawn.headers['content-type']).toBe('image/png');
    expect(await size(drawn.body)).toEqual([200, 100, 'png']);
    const unsafe = await get(edge, svgOrigin.name, '/w=200/images/tracking.svg');
    expect([unsafe.status, unsafe.headers['ukiyo-error']]).toEqual([422, 'unsafe-svg']);
    expect(origin.hitsOf('/images/pixel.png')).toBe(0);
  });
});

// Fan-out needs a Redis server: REDIS_URL, else a local one when it answers.
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const redisUp = await new Promise<boolean>((resolve) => {
  const url = new URL(redisUrl);
  const socket = connect({ host: url.hostname, port: Number(url.port || 6379) });
  const done = (up: boolean) => {
    socket.destroy();
    resolve(up);
  };
  socket.once('connect', () => done(true));
  socket.once('error', () => done(false));
  socket.setTimeout(500, () => done(false));
});

describe('animations (issue 14)', () => {
  it('keeps every frame of an animated GIF through a resize', async () => {
    const answer = await get(edge, plain.name, '/w=100/images/anim.gif');
    expect(answer.status, answer.body.toString()).toBe(200);
    expect(answer.headers['content-type']).toBe('image/gif');
    const meta = await sharp(answer.body, { animated: true }).metadata();
    expect(meta).toMatchObject({ pages: 3, pageHeight: 50, width: 100, delay: [100, 200, 300], loop: 2 });
    const { data } = await sharp(answer.body, { animated: true }).raw().toBuffer({ resolveWithObject: true });
    const centre = (frame: number) => [...data.subarray(((frame * 50 + 25) * 100 + 50) * 4).subarray(0, 3)];
    expect([0, 1, 2].map(centre)).toEqual([
      [255, 0, 0],
      [0, 255, 0],
      [0, 0, 255],
    ]);
    const through = await get(edge, plain.name, '/w=100,through=gif/images/anim.gif');
    expect(through.body.equals(animation)).toBe(true);
  });

  it('converts an animated GIF to MP4, cached like any variant, and refuses a still with 400', async () => {
    const answer = await get(edge, plain.name, '/w=100,f=mp4/images/anim.gif');
    expect(answer.status, answer.body.toString()).toBe(200);
    expect(answer.headers['content-type']).toBe('video/mp4');
    expect(answer.headers['x-cache']).toBe('MISS');
    // Read from a pipe, which only works when `moov` comes before the media (faststart).
    const probe = JSON.parse(
      execFileSync(
        'ffprobe',
        ['-v', 'error', '-count_frames', '-show_streams', '-show_format', '-of', 'json', '-i', 'pipe:0'],
        { input: answer.body },
      ).toString(),
    ) as { streams: Array<Record<string, unknown>>; format: { duration: string } };
    expect(probe.streams).toHaveLength(1);
    expect(probe.streams[0]).toMatchObject({
      codec_name: 'h264',
      pix_fmt: 'yuv420p',
      width: 100,
      height: 50,
    });
    // The three frames and the 1 ms copy of the last that closes its delay.
    expect(probe.streams[0]?.nb_read_frames).toBe('4');
    expect(Number(probe.format.duration)).toBeCloseTo(0.6, 2);
    const again = await get(edge, plain.name, '/w=100,f=mp4/images/anim.gif');
    expect(again.headers['x-cache']).toBe('HIT');
    expect(again.body.equals(answer.body)).toBe(true);

    const still = await get(edge, plain.name, '/f=mp4/images/photo.jpg');
    expect(still.status).toBe(400);
    expect(still.headers['ukiyo-error']).toBe('not-animated');
    expect(still.body.toString()).toContain('animated GIF and WebP');
  });
});

describe.skipIf(!redisUp)('fan-out over Redis', () => {
  it('empties every edge when one purges, and reloads every edge when one sees an origin change', async () => {
    const first = await startEdge({ REDIS_URL: redisUrl });
    const second = await startEdge({ REDIS_URL: redisUrl });
    await get(first, plain.name, '/w=61/images/photo.jpg');
    await get(second, plain.name, '/w=61/images/photo.jpg');
    expect(await second.lookup(plain.originID, '/images/photo.jpg')).toHaveLength(1);
    expect(await first.purge(plain.originID, '/images/photo.jpg')).toHaveLength(1);
    await expect.poll(() => second.lookup(plain.originID, '/images/photo.jpg')).toEqual([]);
    const added = await addOrigin();
    await first.refreshOrigins();
    await expect.poll(async () => (await get(second, added.name, '/w=10/images/photo.jpg')).status).toBe(200);
  });
});
