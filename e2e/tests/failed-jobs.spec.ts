import { expect, test, type Page } from '@playwright/test';
import { ADMIN } from '../support/fixtures.ts';
import { login, screenshot } from './helpers.ts';

const SIZES = [
  [1280, 800],
  [390, 844],
] as const;

/**
 * The administrator's organization is kept by the server across logins: after working in the
 * live organization the next specs would start there, so a test that leaves it goes back to
 * the demo organization the administrator lands in.
 */
async function backToDemoOrganization(page: Page) {
  await page.goto('/auth/changeOrganization');
  await page.getByTestId('organization-option').filter({ hasText: 'demo-image' }).click();
  await expect(page).toHaveURL(/\/origin\/index$/);
}

async function signIn(page: Page, language: 'ja' | 'en') {
  await page.addInitScript((value) => window.localStorage.setItem('ukiyo.language', value), language);
  await login(page, ADMIN.email, ADMIN.password);
  await expect(page).toHaveURL(/\/origin\/index$/);
}

/** Both sizes of the current screen, with nothing wider than the phone (e2e/artifacts/{name}/). */
async function screenshots(page: Page, name: string, language: 'ja' | 'en') {
  for (const [width, height] of SIZES) {
    await page.setViewportSize({ width, height });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
    await screenshot(page, `${name}/${language}-${width}x${height}`);
  }
}

test.describe.serial('durable jobs in the console', () => {
  for (const language of ['ja', 'en'] as const) {
    test(`administrators see failed jobs (${language})`, async ({ page }) => {
      await signIn(page, language);
      await page.getByTestId('user-menu').click();
      await page.getByTestId('nav-adminJobs').click();
      await expect(page).toHaveURL(/\/admin\/jobs$/);
      const rows = page.getByTestId('dead-letter-row');
      await expect(rows).toHaveCount(language === 'ja' ? 3 : 2);
      await expect(page.getByTestId('dead-letter-target').first()).toBeVisible();
      await expect(page.getByText('the receiver answered 503')).toBeVisible();
      await expect(
        page.getByRole('cell', { name: language === 'ja' ? 'アーカイブのアップロード' : 'Archive upload' }),
      ).toBeVisible();
      await screenshots(page, 'failed-jobs', language);
      if (language !== 'ja') return;

      // One more attempt of the mail: it leaves the list (nothing sends mail in this server).
      await page.setViewportSize({ width: 1280, height: 800 });
      const mail = rows.filter({ hasText: 'example.com' }).filter({ hasText: 'メール' });
      await mail.getByTestId('dead-letter-retry').click();
      await expect(page.getByTestId('flash-message')).toContainText('ジョブをもう一度試行します');
      await expect(rows).toHaveCount(2);
    });
  }

  for (const language of ['ja', 'en'] as const) {
    test(`a live organization's webhook signing secret is shown once and rotated (${language})`, async ({
      page,
    }) => {
      await signIn(page, language);
      try {
        await page.goto('/auth/changeOrganization');
        await page.getByTestId('organization-option').filter({ hasText: 'E2E Live' }).click();
        await page.goto('/organization/update');
        const card = page.getByTestId('webhook-secret');
        await expect(card).toBeVisible();
        await card.getByTestId('webhook-secret-rotate').click();
        if (language === 'en') {
          // The Japanese run made the secret: rotating asks first.
          await page.getByTestId('webhook-secret-confirm-confirm').click();
        }
        const value = card.getByTestId('webhook-secret-value');
        await expect(value).toHaveText(/^whsec_[A-Za-z0-9+/]{43}=$/);
        await expect(card.getByTestId('webhook-secret-status')).toContainText(
          language === 'ja' ? '作成日時' : 'created',
        );
        await card.scrollIntoViewIfNeeded();
        await screenshots(page, 'webhook-secret', language);
        // Shown once: a fresh visit shows when it was made, never the secret.
        await page.reload();
        await expect(page.getByTestId('webhook-secret-status')).toBeVisible();
        await expect(page.getByTestId('webhook-secret-value')).toHaveCount(0);

        // The card links to the receivers' guide: headers, the library's verify, a worked example.
        await page.getByTestId('webhook-secret-docs').click();
        await expect(page).toHaveURL(/\/docs\/live\/webhooks$/);
        await expect(page.getByRole('heading', { level: 1 })).toHaveText(
          language === 'ja' ? 'Webhookの署名と再送' : 'Webhook signatures and retries',
        );
        await expect(page.getByText('v1,onuOMPofFknPXz/pLSRtQFv+SlPyonMsm9QhY9HKTaM=').first()).toBeVisible();
        await screenshots(page, 'webhook-docs', language);
      } finally {
        await backToDemoOrganization(page);
      }
    });
  }
});
