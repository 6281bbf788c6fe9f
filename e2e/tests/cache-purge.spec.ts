import { expect, test, type Page } from '@playwright/test';
import { DEMO_OWNER } from '../support/fixtures.ts';
import { api, fetchFromEdge, UI_API } from './edge.ts';
import { login, screenshot } from './helpers.ts';

/** The demo origin's host, with two of its sample images converted (cached) by the edge. */
async function warmDemoOrigin(page: Page): Promise<{ originID: number; name: string }> {
  const answer = await page.request.post(api('origin.list_minimum'), { headers: UI_API, data: {} });
  const [origin] = (await answer.json()).origins as { originID: number; name: string }[];
  for (const path of ['/w=120/fuji.jpg', '/w=80/koi.png']) {
    expect((await fetchFromEdge(origin!.name, path)).status).toBe(200);
    const again = await fetchFromEdge(origin!.name, path);
    expect(again.status).toBe(200);
  }
  return origin!;
}

async function askToPurge(page: Page, originID: number, scope: 'prefix' | 'origin') {
  await page.goto('/cache');
  await page.getByTestId('cache-purge-origin').selectOption(String(originID));
  if (scope === 'prefix') await page.getByTestId('cache-purge-prefix').fill('fuji');
  else await page.getByTestId('cache-purge-scope-origin').check();
  await page.getByTestId('cache-purge').click();
  await expect(page.getByTestId('cache-purge-modal')).toBeVisible();
}

async function shots(page: Page, name: string) {
  for (const [width, height] of [
    [1280, 800],
    [390, 844],
  ] as const) {
    await page.setViewportSize({ width, height });
    await screenshot(page, `${name}-${width}`);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
  }
  await page.setViewportSize({ width: 1280, height: 800 });
}

test('purges by path prefix and a whole origin from the cache page, after a confirmation', async ({
  page,
}) => {
  await login(page, DEMO_OWNER.email, DEMO_OWNER.password);
  await expect(page).not.toHaveURL(/\/auth\/login$/);
  const origin = await warmDemoOrigin(page);

  await askToPurge(page, origin.originID, 'prefix');
  await expect(page.getByTestId('cache-purge-modal')).toContainText('/fuji');
  await shots(page, 'cache-purge-confirm-ja');
  await page.getByTestId('cache-purge-confirm').click();
  await expect(page.getByTestId('cache-purged')).toContainText('1');
  await shots(page, 'cache-purged-ja');
  // The purged image converts again; the other one is still cached.
  expect((await fetchFromEdge(origin.name, '/w=120/fuji.jpg')).status).toBe(200);

  await askToPurge(page, origin.originID, 'origin');
  await page.getByTestId('cache-purge-cancel').click();
  await expect(page.getByTestId('cache-purged')).toHaveCount(0);
  await askToPurge(page, origin.originID, 'origin');
  await page.getByTestId('cache-purge-confirm').click();
  await expect(page.getByTestId('cache-purged')).toContainText('2');
});

test('the purge card in English', async ({ page }) => {
  await page.goto('/auth/login');
  await page.getByTestId('language-switch').click();
  await page.getByTestId('language-en').click();
  await login(page, DEMO_OWNER.email, DEMO_OWNER.password);
  await expect(page).not.toHaveURL(/\/auth\/login$/);
  const origin = await warmDemoOrigin(page);
  await askToPurge(page, origin.originID, 'origin');
  await expect(page.getByTestId('cache-purge-modal')).toContainText(
    'Delete the cached variants of every image',
  );
  await shots(page, 'cache-purge-confirm-en');
  await page.getByTestId('cache-purge-confirm').click();
  await expect(page.getByTestId('cache-purged')).toContainText('Purged');
  await shots(page, 'cache-purged-en');
});
