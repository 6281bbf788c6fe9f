import { expect, test } from '@playwright/test';
import { ADMIN, STATS_USER } from '../support/fixtures.ts';
import { login, screenshot } from './helpers.ts';

test.describe('foundation', () => {
  test('the login screen, in Japanese by default', async ({ page }) => {
    await page.goto('/');
    await expect(page).toHaveURL(/\/auth\/login$/);
    await expect(page.getByTestId('login-form')).toBeVisible();
    await expect(page).toHaveTitle(/ \| Ukiyo$/);
    await expect(page.locator('html')).toHaveAttribute('lang', 'ja');
    await screenshot(page, 'login-ja');
  });

  test('a wrong password is refused with the spec’s message', async ({ page }) => {
    await login(page, ADMIN.email, 'not-the-password');
    await expect(page.getByTestId('login-error')).toContainText(
      'メールアドレスまたはパスワードが正しくありません',
    );
    await expect(page).toHaveURL(/\/auth\/login$/);
  });

  test('an administrator lands on /origin/index with the administrator menu', async ({ page }) => {
    await login(page, ADMIN.email, ADMIN.password);
    await expect(page).toHaveURL(/\/origin\/index$/);
    for (const id of [
      'originIndex',
      'adminStatistics',
      'liveStreamingGroup',
      'adminInvoices',
      'preview',
      'cache',
    ]) {
      await expect(page.getByTestId(`nav-${id}`)).toBeVisible();
    }
    await expect(page.getByTestId('user-menu')).toContainText('DEMO0001 (demo-image)');
    await screenshot(page, 'origin-index-admin-ja');
    await page.getByTestId('user-menu').click();
    await expect(page.getByTestId('user-email')).toContainText(ADMIN.email);
    await screenshot(page, 'user-menu-ja');
    await page.getByTestId('nav-logout').click();
    await expect(page).toHaveURL(/\/auth\/login$/);
  });

  test('a user with only the statistics permission lands on /statistics and sees only what it allows', async ({
    page,
  }) => {
    await login(page, STATS_USER.email, STATS_USER.password);
    await expect(page).toHaveURL(/\/statistics$/);
    await expect(page.getByTestId('nav-statistics')).toBeVisible();
    // The regular menu's /preview needs no permission (console-spec section 2).
    await expect(page.getByTestId('nav-preview')).toBeVisible();
    await expect(page.getByTestId('nav-originIndex')).toHaveCount(0);
    await expect(page.getByTestId('nav-cache')).toHaveCount(0);
    await page.getByTestId('user-menu').click();
    await expect(page.getByTestId('nav-memberIndex')).toHaveCount(0);
    await expect(page.getByTestId('nav-organizationUpdate')).toHaveCount(0);
    await expect(page.getByTestId('nav-tokenIndex')).toBeVisible();
    await screenshot(page, 'statistics-stats-user-ja');

    // A page needing a permission the user lacks is not found for them.
    await page.goto('/origin/index');
    await expect(page).toHaveURL(/\/404$/);
    await expect(page.getByTestId('not-found')).toBeVisible();
    await page.goto('/admin/invoices');
    await expect(page).toHaveURL(/\/404$/);
  });

  test('a 403 in the middle of a session flashes and returns to the login screen', async ({
    page,
    context,
  }) => {
    await login(page, ADMIN.email, ADMIN.password);
    await expect(page).toHaveURL(/\/origin\/index$/);
    await page.goto('/auth/changeOrganization');
    await expect(page.getByTestId('organization-option').first()).toBeVisible();
    await context.clearCookies();
    await page.getByTestId('organization-option').first().click();
    await expect(page).toHaveURL(/\/auth\/login$/);
    await expect(page.getByTestId('flash-message')).toContainText('セッションが無効です');
    await expect(page.getByTestId('flash-message')).toHaveAttribute('data-variant', 'danger');
    await screenshot(page, 'session-invalid-flash-ja');
  });

  test('the language switch changes the interface and persists', async ({ page }) => {
    await page.goto('/auth/login');
    await page.getByTestId('language-switch').click();
    await page.getByTestId('language-en').click();
    await expect(page.locator('html')).toHaveAttribute('lang', 'en');
    await expect(page.getByLabel('Password', { exact: true })).toBeVisible();
    await page.reload();
    await expect(page.locator('html')).toHaveAttribute('lang', 'en');
    await login(page, ADMIN.email, ADMIN.password);
    await expect(page).toHaveURL(/\/origin\/index$/);
    await screenshot(page, 'origin-index-admin-en');
  });

  test('the navbar collapses on a small screen and closes on route change', async ({ page }) => {
    await page.setViewportSize({ width: 390, height: 844 });
    await login(page, ADMIN.email, ADMIN.password);
    await expect(page).toHaveURL(/\/origin\/index$/);
    const toggler = page.getByTestId('navbar-toggler');
    await expect(toggler).toBeVisible();
    await expect(page.getByTestId('nav-preview')).toBeHidden();
    await toggler.click();
    await expect(page.getByTestId('nav-preview')).toBeVisible();
    await expect(page.locator('.navbar-collapse.show')).toBeVisible();
    await page.waitForTimeout(400); // let the collapse animation finish for the picture
    await screenshot(page, 'navbar-open-small');
    await page.getByTestId('nav-preview').click();
    await expect(page).toHaveURL(/\/preview$/);
    await expect(page.getByTestId('nav-preview')).toBeHidden();
    await screenshot(page, 'navbar-closed-small');
  });

  test('unknown paths show the not-found page without login', async ({ page }) => {
    await page.goto('/no/such/page');
    await expect(page.getByTestId('not-found')).toBeVisible();
    await screenshot(page, 'not-found-ja');
  });
});
