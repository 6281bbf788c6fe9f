import { expect, test, type Page } from '@playwright/test';
import { DOCS_PAGES, docsPagePath } from '../../apps/console/src/features/docs/components/docs-tree.ts';
import { ADMIN, STATS_USER } from '../support/fixtures.ts';
import { login, screenshot } from './helpers.ts';

type Language = 'ja' | 'en';

/** Every console message of type error and every uncaught exception of the page. */
function collectErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => errors.push(`pageerror: ${error.message}`));
  return errors;
}

/** The language the console starts in (it remembers the choice in localStorage). */
async function useLanguage(page: Page, language: Language) {
  await page.addInitScript((value) => window.localStorage.setItem('ukiyo.language', value), language);
}

for (const language of ['ja', 'en'] as const) {
  test(`every documentation page opens in ${language} without errors`, async ({ page }) => {
    test.setTimeout(120_000);
    const errors = collectErrors(page);
    await useLanguage(page, language);
    for (const docsPage of DOCS_PAGES) {
      await page.goto(docsPagePath(docsPage));
      const article = page.getByTestId('docs-article');
      await expect(article).toBeVisible();
      await expect(article).toHaveAttribute('lang', language);
      await expect(article.locator('h1')).toHaveText(/\S/);
      await expect(page.locator(`[data-testid="docs-nav-link"][data-slug="${docsPage.slug}"]`)).toHaveClass(
        /active/,
      );
      if (docsPage.deprecated) await expect(page.getByTestId('docs-deprecated')).toBeVisible();
    }
    expect(errors).toEqual([]);

    await page.goto('/docs/');
    await screenshot(page, `docs-index-${language}`);
    await page.goto('/docs/image/signed-url');
    await expect(page.getByTestId('docs-toc')).toBeVisible();
    await screenshot(page, `docs-signed-url-${language}`);
    await page.goto('/docs/image/conversion-parameters');
    await expect(page.getByTestId('docs-article')).toBeVisible();
    await screenshot(page, `docs-conversion-parameters-${language}`);
  });
}

test('the search finds a page and a #hash deep link scrolls to its heading', async ({ page }) => {
  const errors = collectErrors(page);
  await page.goto('/docs/');
  await page.getByTestId('docs-search').fill('署名');
  const result = page.getByTestId('docs-search-result').first();
  await expect(result).toBeVisible();
  await screenshot(page, 'docs-search-ja');
  await result.click();
  await expect(page).toHaveURL(/\/docs\/image\/signed-url/);
  await expect(page.getByTestId('docs-article')).toBeVisible();

  await useLanguage(page, 'en');
  await page.goto('/docs/');
  await page.getByTestId('docs-search').fill('archive destination');
  await expect(page.getByTestId('docs-search-result').first()).toContainText('Archive');
  await screenshot(page, 'docs-search-en');

  // A deep link far down the page: the heading ends up in view.
  await page.goto('/docs/image/conversion-parameters#text-overlay');
  await expect(page.locator('[id="text-overlay"]')).toBeInViewport();
  // Links of the table of contents stay in the page and scroll too.
  await page.goto('/docs/image/signed-url');
  await page.getByTestId('docs-toc-link').filter({ hasText: 'Python' }).click();
  await expect(page).toHaveURL(/#python$/);
  await expect(page.locator('[id="python"]')).toBeInViewport();
  expect(errors).toEqual([]);
});

test('a status event created by the administrator is shown to everyone', async ({ page, browser }) => {
  const errors = collectErrors(page);
  const title = `E2E maintenance ${Date.now()}`;
  await login(page, ADMIN.email, ADMIN.password);
  await expect(page).toHaveURL(/\/origin\/index$/);
  await page.getByTestId('nav-status').click();
  await expect(page).toHaveURL(/\/status$/);
  await page.getByTestId('status-new').click();
  await page.getByTestId('status-kind').selectOption('maintenance');
  await page.getByTestId('status-state').selectOption('scheduled');
  await page.getByTestId('status-title').fill(title);
  await page
    .getByTestId('status-body')
    .fill('The image edge restarts; requests may answer 503 for a minute.');
  await page.getByTestId('status-starts').fill('2099-01-10T02:00');
  await page.getByTestId('status-ends').fill('2099-01-10T03:00');
  await screenshot(page, 'status-form-ja');
  await page.getByTestId('status-submit').click();
  const event = page.getByTestId('status-event').filter({ hasText: title });
  await expect(event).toBeVisible();
  await expect(event.getByTestId('status-event-time')).toContainText('2099/01/10 02:00 (UTC+9)');
  await expect(event.getByTestId('status-state-badge')).toHaveText('予定');
  await screenshot(page, 'status-admin-ja');
  expect(errors).toEqual([]);

  // Logged out, in English: the same event, no controls.
  const visitor = await browser.newPage();
  const visitorErrors = collectErrors(visitor);
  await useLanguage(visitor, 'en');
  await visitor.goto('/status');
  const shown = visitor.getByTestId('status-event').filter({ hasText: title });
  await expect(shown).toBeVisible();
  await expect(shown.getByTestId('status-event-time')).toContainText('10 Jan 2099 02:00 (UTC+9)');
  await expect(shown.getByTestId('status-state-badge')).toHaveText('Scheduled');
  await expect(visitor.getByTestId('status-new')).toHaveCount(0);
  await expect(visitor.getByTestId('status-edit')).toHaveCount(0);
  await screenshot(visitor, 'status-en');
  expect(visitorErrors).toEqual([]);
  await visitor.close();

  // The administrator removes it again.
  await event.getByTestId('status-delete').click();
  await page.getByTestId('status-delete-confirm').click();
  await expect(page.getByTestId('status-event').filter({ hasText: title })).toHaveCount(0);
});

test('the contact form checks its fields and sends the mail to support', async ({ page }) => {
  const errors = collectErrors(page);
  await login(page, STATS_USER.email, STATS_USER.password);
  await expect(page).toHaveURL(/\/statistics$/);
  await page.getByTestId('nav-help').click();
  await expect(page).toHaveURL(/\/help\/$/);
  await expect(page.getByTestId('help-faq-item').first()).toBeVisible();
  await page.getByTestId('help-submit').click();
  await expect(page.getByTestId('flash-message')).toContainText('必須項目を入力してください');
  await screenshot(page, 'help-required-ja');

  const message = `E2E question ${Date.now()}: how do I sign URLs in Go?`;
  await page.getByTestId('help-category').selectOption('usage');
  await page.getByTestId('help-company').fill('E2E Images Inc.');
  await page.getByTestId('help-message').fill(message);
  await page.getByTestId('help-agreement').check();
  await page.getByTestId('help-submit').click();
  await expect(page.getByTestId('flash-message')).toContainText('2〜3営業日以内');
  await screenshot(page, 'help-sent-ja');
  expect(errors).toEqual([]);

  await page.getByTestId('language-switch').click();
  await page.getByTestId('language-en').click();
  await expect(page.getByTestId('help-contact')).toContainText('Contact us');
  await page.getByTestId('help-faq-item').first().locator('button').click();
  await screenshot(page, 'help-en');

  // The administrator finds the mail to support in the outbox.
  await page.getByTestId('user-menu').click();
  await page.getByTestId('nav-logout').click();
  await login(page, ADMIN.email, ADMIN.password);
  await expect(page).toHaveURL(/\/origin\/index$/);
  await page.goto('/admin/outbox');
  const row = page.locator('[data-testid="outbox-row"][data-to="support@ukiyo.localhost"]').first();
  await expect(row).toBeVisible();
  await row.getByTestId('outbox-toggle').click();
  await expect(page.getByTestId('outbox-body').first()).toContainText(message);
  await expect(
    page.locator(`[data-testid="outbox-row"][data-to="${STATS_USER.email}"]`).first(),
  ).toBeVisible();
});
