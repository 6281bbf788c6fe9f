// The preview tester's f=json card, the origin's true byte count behind the savings, and
// animated results playing; screenshots at desktop and phone widths in both languages.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, test, type Locator, type Page } from '@playwright/test';
import { OriginKind } from '@ukiyo/contract';
import sharp from 'sharp';
import { ADMIN } from '../support/fixtures.ts';
import { api, UI_API } from './edge.ts';
import { login, screenshot } from './helpers.ts';

let imageServer: Server;
let imagePort = 0;
let photo: Buffer; // 1000x750 JPEG, quality 98: much larger than any conversion of it
let spinner: Buffer; // 200x150 GIF, 4 frames of different colours, looping

test.beforeAll(async () => {
  photo = await sharp({ create: { width: 1000, height: 750, channels: 3, background: '#e76f51' } })
    .composite([
      {
        input: { create: { width: 1000, height: 250, channels: 3, background: '#264653' } },
        top: 500,
        left: 0,
      },
    ])
    .jpeg({ quality: 98 })
    .toBuffer();
  const [width, height] = [200, 150];
  const colours = [
    [230, 60, 40],
    [40, 160, 60],
    [40, 80, 220],
    [240, 200, 40],
  ];
  const strip = Buffer.alloc(width * height * colours.length * 3);
  colours.forEach((colour, frame) => {
    for (let i = 0; i < width * height; i++) strip.set(colour, (frame * width * height + i) * 3);
  });
  spinner = await sharp(strip, {
    raw: { width, height: height * colours.length, channels: 3, pageHeight: height },
  })
    .gif({ delay: colours.map(() => 250), loop: 0 })
    .toBuffer();
  imageServer = createServer((req, res) => {
    const files: Record<string, [Buffer, string]> = {
      '/photo.jpg': [photo, 'image/jpeg'],
      '/spinner.gif': [spinner, 'image/gif'],
    };
    const file = files[req.url ?? ''];
    if (!file) return res.writeHead(404).end();
    res.writeHead(200, { 'content-type': file[1] }).end(file[0]);
  });
  await new Promise<void>((resolve) => imageServer.listen(0, '127.0.0.1', resolve));
  imagePort = (imageServer.address() as AddressInfo).port;
});

test.afterAll(async () => {
  await new Promise((resolve) => imageServer.close(resolve));
});

async function addOrigin(page: Page): Promise<string> {
  const response = await page.request.post(api('origin.add'), {
    headers: UI_API,
    data: {
      origin: {
        kind: OriginKind.http,
        defaultCache: 3600,
        description: 'E2E preview info',
        config: { scheme: 'http', host: `127.0.0.1:${imagePort}`, pathPrefix: '', rewriteHost: '' },
      },
    },
  });
  expect(response.ok(), await response.text()).toBe(true);
  return String(((await response.json()) as { origin: { originID: number } }).origin.originID);
}

async function preview(
  page: Page,
  originID: string,
  path: string,
  { extra = '', format = 'webp' }: { extra?: string; format?: string } = {},
) {
  await page.goto('/preview');
  await page.getByTestId('preview-origin').selectOption(originID);
  await page.getByTestId('preview-path').fill(path);
  await page.getByTestId('preview-width').fill('300');
  await page.getByTestId('preview-format-select').selectOption(format);
  await page.getByTestId('preview-extra').fill(extra);
  await page.getByTestId('preview-compare-switch').uncheck();
  // The edge loads a new origin within its poll (a second): until then it answers 404.
  await expect(async () => {
    await page.getByTestId('preview-submit').click();
    await expect(page.getByTestId('preview-info')).toHaveAttribute('data-state', 'loaded', {
      timeout: 3_000,
    });
  }).toPass({ timeout: 20_000 });
  await expect(page.getByTestId('preview-converted')).toHaveAttribute('data-state', 'loaded', {
    timeout: 20_000,
  });
  await expect(page.getByTestId('preview-original')).toHaveAttribute('data-state', 'loaded', {
    timeout: 20_000,
  });
}

/** Nothing reaches past the viewport's right edge (the page's own width, and every element). */
async function expectNoSidewaysOverflow(page: Page) {
  const problems = await page.evaluate(() => {
    const width = window.innerWidth;
    const found: string[] = [];
    if (document.documentElement.scrollWidth > width)
      found.push(`page ${document.documentElement.scrollWidth}px`);
    for (const element of Array.from(document.querySelectorAll('#main *'))) {
      const box = element.getBoundingClientRect();
      if (box.width > 0 && box.right > width + 0.5)
        found.push(`${element.localName}.${element.className} ${box.right}`);
    }
    return found.slice(0, 5);
  });
  expect(problems).toEqual([]);
}

/** Two pictures of a playing animation a few frames apart differ. */
async function expectPlaying(media: Locator) {
  const first = await media.screenshot();
  await media.page().waitForTimeout(600);
  const later = await media.screenshot();
  expect(first.equals(later)).toBe(false);
}

test.describe.serial('the preview tester with f=json', () => {
  let originID = '';

  test('shows the f=json card and measures savings against the bytes the origin holds', async ({ page }) => {
    test.setTimeout(60_000);
    await login(page, ADMIN.email, ADMIN.password);
    await expect(page).toHaveURL(/\/origin\/index$/);
    originID = await addOrigin(page);
    await preview(page, originID, '/photo.jpg');

    // The original panel shows the origin's own file, not a copy the edge re-encoded.
    const original = page.getByTestId('preview-original');
    await expect(original.getByTestId('preview-bytes')).toHaveAttribute('data-bytes', String(photo.length));
    await expect(original.getByTestId('preview-format')).toHaveText('JPEG');
    await expect(original.getByTestId('preview-dimensions')).toHaveAttribute('data-width', '1000');

    const info = page.getByTestId('preview-info');
    await expect(info.getByTestId('preview-info-result-size')).toHaveAttribute('data-value', '300x225');
    await expect(info.getByTestId('preview-info-result-format')).toHaveAttribute('data-value', 'webp');
    await expect(info.getByTestId('preview-info-original-size')).toHaveAttribute('data-value', '1000x750');
    await expect(info.getByTestId('preview-info-original-bytes')).toHaveAttribute(
      'data-value',
      String(photo.length),
    );
    await expect(info.getByTestId('preview-info-dominant')).toHaveText(/^#[0-9a-f]{6}$/);
    await expect(info.getByTestId('preview-info-placeholder')).toBeVisible();
    // The card describes the very variant shown beside it.
    const converted = page.getByTestId('preview-converted');
    const convertedBytes = Number(await converted.getByTestId('preview-bytes').getAttribute('data-bytes'));
    await expect(info.getByTestId('preview-info-result-bytes')).toHaveAttribute(
      'data-value',
      String(convertedBytes),
    );
    const saving = Math.round((1 - convertedBytes / photo.length) * 1000) / 10;
    await expect(converted.getByTestId('preview-saving')).toHaveText(`${saving}% 削減`);

    for (const language of ['ja', 'en'] as const) {
      if (language === 'en') {
        await page.evaluate(() => window.localStorage.setItem('ukiyo.language', 'en'));
        await preview(page, originID, '/photo.jpg');
        await expect(page.getByTestId('preview-info')).toContainText('Image info (f=json)');
      }
      for (const [width, height] of [
        [1280, 800],
        [390, 844],
      ] as const) {
        await page.setViewportSize({ width, height });
        await page.getByTestId('preview-info').scrollIntoViewIfNeeded();
        await expectNoSidewaysOverflow(page);
        await screenshot(page, `preview-info-${language}-${width}`);
      }
    }
    await page.evaluate(() => window.localStorage.setItem('ukiyo.language', 'ja'));
  });

  test('plays an animated result and counts its frames', async ({ page }) => {
    test.setTimeout(60_000);
    await login(page, ADMIN.email, ADMIN.password);
    await expect(page).toHaveURL(/\/origin\/index$/);
    // through=gif sends the animation as the origin has it, whatever the edge does with frames.
    await preview(page, originID, '/spinner.gif', { extra: 'through=gif' });
    const converted = page.getByTestId('preview-converted');
    await expect(converted.getByTestId('preview-format')).toHaveText('GIF');
    await expectPlaying(converted.locator('img'));
    await expectPlaying(page.getByTestId('preview-original').locator('img'));
    const info = page.getByTestId('preview-info');
    await expect(info.getByTestId('preview-info-result-frames')).toHaveAttribute('data-value', '4');
    await expect(info.getByTestId('preview-info-original-bytes')).toHaveAttribute(
      'data-value',
      String(spinner.length),
    );
    await page.setViewportSize({ width: 390, height: 844 });
    await expectNoSidewaysOverflow(page);
    await screenshot(page, 'preview-info-animated-ja-390');

    // As MP4: a muted looping video that plays by itself, described by f=json all the same.
    await page.setViewportSize({ width: 1280, height: 800 });
    await preview(page, originID, '/spinner.gif', { format: 'mp4' });
    await expect(converted.getByTestId('preview-format')).toHaveText('MP4');
    const video = converted.getByTestId('preview-video');
    await expect(video).toHaveJSProperty('muted', true);
    await expect(video).toHaveJSProperty('loop', true);
    await expect
      .poll(() => video.evaluate((element: HTMLVideoElement) => element.currentTime))
      .toBeGreaterThan(0);
    await expectPlaying(video);
    await expect(info.getByTestId('preview-info-result-format')).toHaveAttribute('data-value', 'mp4');
    await expect(info.getByTestId('preview-info-result-frames')).toHaveAttribute('data-value', '4');
    await screenshot(page, 'preview-info-mp4-ja-1280');
  });
});
