import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { serve } from '@hono/node-server';
import { beforeAll, describe, expect, it } from 'vitest';
import { precompressDirectory } from '../../console/build/precompress.ts';
import { createServerApp } from '../src/http/app.ts';
import { testServer } from './harness.ts';

// The built console as the server sends it (issue 17): a fake build with a content-hashed
// asset, precompressed by the build's own step, through the real app on a real socket.
// node:http, not fetch: fetch decodes bodies and drops Content-Encoding's bytes from view.
let base: string;
const script = `export const greeting = ${JSON.stringify('こんにちは '.repeat(400))};\n`;
const html =
  '<!doctype html><html><head><script type="module" src="/assets/app-Cq3x9k.js"></script></head><body></body></html>';

beforeAll(async () => {
  const server = await testServer();
  const dist = mkdtempSync(join(tmpdir(), 'ukiyo-dist-'));
  mkdirSync(join(dist, 'assets'));
  writeFileSync(join(dist, 'index.html'), html.padEnd(2000, ' '));
  writeFileSync(join(dist, 'assets/app-Cq3x9k.js'), script);
  writeFileSync(join(dist, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  writeFileSync(join(dist, '.build-stamp'), 'abc\n');
  await precompressDirectory(dist);
  const app = createServerApp(server.deps, { consoleDist: dist });
  base = await new Promise<string>((resolve) =>
    serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) =>
      resolve(`http://127.0.0.1:${info.port}`),
    ),
  );
});

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

function get(path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { method, headers }, (res) => {
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

describe('the built console', () => {
  it('sends brotli when asked, else gzip, else the file itself, each with its length and ETag', async () => {
    const br = await get('/assets/app-Cq3x9k.js', { 'Accept-Encoding': 'gzip, deflate, br, zstd' });
    expect(br.status).toBe(200);
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(br.headers.vary).toBe('Accept-Encoding');
    expect(Number(br.headers['content-length'])).toBe(br.body.length);
    expect(br.body.length).toBeLessThan(Buffer.byteLength(script) / 4);
    expect(brotliDecompressSync(br.body).toString()).toBe(script);

    const gzip = await get('/assets/app-Cq3x9k.js', { 'Accept-Encoding': 'gzip, deflate' });
    expect(gzip.headers['content-encoding']).toBe('gzip');
    expect(Number(gzip.headers['content-length'])).toBe(gzip.body.length);
    expect(gunzipSync(gzip.body).toString()).toBe(script);
    // br refused by q=0: gzip.
    const refused = await get('/assets/app-Cq3x9k.js', { 'Accept-Encoding': 'br;q=0, gzip;q=0.5' });
    expect(refused.headers['content-encoding']).toBe('gzip');

    for (const accept of [undefined, 'identity', 'deflate']) {
      const plain = await get('/assets/app-Cq3x9k.js', accept ? { 'Accept-Encoding': accept } : {});
      expect(plain.headers['content-encoding']).toBeUndefined();
      expect(plain.headers.vary).toBe('Accept-Encoding');
      expect(Number(plain.headers['content-length'])).toBe(Buffer.byteLength(script));
      expect(plain.body.toString()).toBe(script);
    }
    const etags = new Set([
      br.headers.etag,
      gzip.headers.etag,
      (await get('/assets/app-Cq3x9k.js')).headers.etag,
    ]);
    expect(etags.size).toBe(3);
  });

  it('keeps hashed assets for a year and has index.html revalidated', async () => {
    const asset = await get('/assets/app-Cq3x9k.js', { 'Accept-Encoding': 'br' });
    expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    for (const path of ['/index.html', '/auth/login', '/favicon.svg']) {
      const page = await get(path, { 'Accept-Encoding': 'br, gzip' });
      expect(page.status).toBe(200);
      expect(page.headers['cache-control']).toBe('no-cache');
    }
    const login = await get('/auth/login', { 'Accept-Encoding': 'br' });
    expect(login.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(login.headers['content-encoding']).toBe('br');
    expect(brotliDecompressSync(login.body).toString()).toBe(html.padEnd(2000, ' '));
  });

  it('answers 304 to the ETag of the representation it would send, and HEAD with the length of GET', async () => {
    const first = await get('/index.html', { 'Accept-Encoding': 'gzip' });
    const etag = first.headers.etag as string;
    const again = await get('/index.html', { 'Accept-Encoding': 'gzip', 'If-None-Match': etag });
    expect(again.status).toBe(304);
    expect(again.headers.etag).toBe(etag);
    expect(again.headers.vary).toBe('Accept-Encoding');
    expect(again.body.length).toBe(0);
    // Another encoding is another representation: sent in full.
    const other = await get('/index.html', { 'Accept-Encoding': 'br', 'If-None-Match': etag });
    expect(other.status).toBe(200);

    const head = await get('/index.html', { 'Accept-Encoding': 'br' }, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.headers['content-encoding']).toBe('br');
    expect(Number(head.headers['content-length'])).toBe(other.body.length);
  });

  it('takes any encoding’s ETag of the deployed index.html for If-Match (the version check)', async () => {
    const br = (await get('/index.html', { 'Accept-Encoding': 'br' }, 'HEAD')).headers.etag as string;
    const plain = (await get('/index.html', {}, 'HEAD')).headers.etag as string;
    for (const etag of [br, plain])
      expect((await get('/index.html', { 'Accept-Encoding': 'gzip', 'If-Match': etag }, 'HEAD')).status).toBe(
        200,
      );
    expect((await get('/index.html', { 'If-Match': '"an-older-build"' }, 'HEAD')).status).toBe(412);
  });

  it('serves neither the build stamp nor the variants as files of their own', async () => {
    // An extensionless path is one of the SPA's routes: index.html, not the stamp.
    const stamp = await get('/.build-stamp');
    expect(stamp.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(stamp.body.toString()).not.toContain('abc');
    expect((await get('/assets/app-Cq3x9k.js.br')).status).toBe(404);
    expect((await get('/assets/app-Cq3x9k.js.gz')).status).toBe(404);
  });
});
