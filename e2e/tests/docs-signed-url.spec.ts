import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, test } from '@playwright/test';
import sharp from 'sharp';
import { ADMIN } from '../support/fixtures.ts';
import { api, fetchFromEdge, UI_API } from './edge.ts';
import { login } from './helpers.ts';

// The signed-URL page's worked example, taken from the page itself, must be what the edge
// accepts: an origin with the example's secret serves the example's paths.
const page = readFileSync(
  new URL('../../apps/console/src/features/docs/content/en/image/signed-url.md', import.meta.url),
  'utf8',
);
const secret = /Secret `([^`]+)`/.exec(page)![1]!;
const withParameters = new URL(/https:\/\/\S+\/sig=1\.[^,\s]+,[^\s]+/.exec(page)![0]).pathname;
const bare = /\/c\/sig=1\.\S+\/photos\/cat\.jpg/.exec(page)![0];

let imageServer: Server;

test.beforeAll(async () => {
  const cat = await sharp({ create: { width: 1200, height: 800, channels: 3, background: '#8e6b3a' } })
    .jpeg()
    .toBuffer();
  imageServer = createServer((req, res) =>
    req.url === '/photos/cat.jpg'
      ? res.writeHead(200, { 'content-type': 'image/jpeg' }).end(cat)
      : res.writeHead(404).end(),
  );
  await new Promise<void>((resolve) => imageServer.listen(0, '127.0.0.1', resolve));
});

test.afterAll(async () => {
  await new Promise((resolve) => imageServer.close(resolve));
});

test('the signed-URL example of the docs is answered by the edge', async ({ page: browser }) => {
  await login(browser, ADMIN.email, ADMIN.password);
  await expect(browser).toHaveURL(/\/origin\/index$/);
  const port = (imageServer.address() as AddressInfo).port;
  const added = await browser.request.post(api('origin.add'), {
    headers: UI_API,
    data: {
      origin: {
        kind: 0,
        enableSignedUrl: true,
        signingSecret: secret,
        config: { scheme: 'http', host: `127.0.0.1:${port}`, pathPrefix: '', rewriteHost: '' },
      },
    },
  });
  expect(added.ok(), await added.text()).toBe(true);
  const name = ((await added.json()) as { origin: { name: string } }).origin.name;

  await expect
    .poll(async () => (await fetchFromEdge(name, withParameters)).status, {
      timeout: 20_000,
      intervals: [500],
    })
    .toBe(200);
  const converted = await fetchFromEdge(name, withParameters);
  expect((await sharp(converted.body).metadata()).width).toBe(400);
  expect((await fetchFromEdge(name, bare)).status).toBe(200);
  expect((await fetchFromEdge(name, withParameters.replace('sig=1.', 'sig=1.A'))).status).toBe(403);
  expect((await fetchFromEdge(name, '/w=400,f=webp:auto/photos/cat.jpg')).status).toBe(403);
});
