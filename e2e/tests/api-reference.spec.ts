import { expect, test, type Page } from '@playwright/test';
import { DEMO_OWNER } from '../support/fixtures.ts';
import { login, screenshot } from './helpers.ts';

// The interactive API reference (/api-reference/): Swagger UI renders the server's OpenAPI
// document under the console's CSP, in both languages, on a desktop and a phone, and the token
// and documentation pages lead to it.

const VIEWPORTS = { desktop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } } as const;

function collectErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => errors.push(`pageerror: ${error.message}`));
  return errors;
}

for (const language of ['ja', 'en'] as const) {
  for (const [name, viewport] of Object.entries(VIEWPORTS)) {
    test(`renders every call of the document in ${language} on a ${name}`, async ({ page }) => {
      const errors = collectErrors(page);
      await page.addInitScript((value) => window.localStorage.setItem('ukiyo.language', value), language);
      await page.setViewportSize(viewport);
      await page.goto('/api-reference/');
      const reference = page.getByTestId('api-reference');
      await expect(reference).toHaveAttribute('data-state', 'ready', { timeout: 20_000 });
      await expect(page.getByRole('heading', { level: 1 })).toHaveText(
        language === 'ja' ? 'APIリファレンス' : 'API reference',
      );
      // One block per documented call: /api/v1's, the cache calls and the live API.
      await expect(
        reference.locator('.opblock-summary-path[data-path="/api/v1/origins/{originID}"]'),
      ).toHaveCount(3);
      await expect(reference.locator('.opblock-summary-path[data-path="/api/cache.delete"]')).toHaveCount(1);
      await reference.locator('.opblock-summary-path[data-path="/api/v1/origins"]').first().click();
      await expect(reference.locator('.opblock.is-open .parameters-container')).toBeVisible();
      // Elements reaching past the viewport, outside a box that scrolls them.
      const sticking = await page.evaluate(() =>
        Array.from(document.querySelectorAll('#main *'))
          .filter((element) => element.getBoundingClientRect().right > window.innerWidth + 0.5)
          .filter((element) => {
            for (let parent = element.parentElement; parent; parent = parent.parentElement) {
              if (getComputedStyle(parent).overflowX !== 'visible') return false;
            }
            return true;
          })
          .map((element) => `${element.localName}.${Array.from(element.classList).join('.')}`),
      );
      expect(sticking, 'elements wider than the viewport').toEqual([]);
      await screenshot(page, `api-reference-${language}-${viewport.width}x${viewport.height}`);
      expect(errors).toEqual([]);
    });
  }
}

test('the token page and the documentation lead to the reference', async ({ page }) => {
  await login(page, DEMO_OWNER.email, DEMO_OWNER.password);
  await page.waitForURL((url) => !url.pathname.startsWith('/auth/'));
  await page.goto('/token/');
  await page.getByTestId('token-api-reference').click();
  await expect(page).toHaveURL(/\/api-reference\/$/);
  await page.goto('/docs/general/platform-api');
  await page
    .getByTestId('docs-article')
    .getByRole('link', { name: /APIリファレンス/ })
    .first()
    .click();
  await expect(page).toHaveURL(/\/api-reference\/$/);
});
