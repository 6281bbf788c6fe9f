import { readFileSync } from 'node:fs';
import { expect, test, type Page } from '@playwright/test';
import { Permission } from '@ukiyo/contract';
import { DEMO_OWNER } from '../support/fixtures.ts';
import { api, UI_API } from './edge.ts';
import { login, screenshot } from './helpers.ts';

const TOKEN_NAME = 'audit e2e purge';

async function call(page: Page, operation: string, data: unknown) {
  const response = await page.request.post(api(operation), { headers: UI_API, data });
  expect(response.status()).toBe(200);
  return response.json();
}

/**
 * The demo organization's owner issues a token, purges with it through the public API and
 * revokes it; the organization's trail shows all three, the purge under the token's name.
 */
async function makeChanges(page: Page) {
  const { origins } = await call(page, 'origin.list_minimum', {});
  const { encodedToken, authToken } = await call(page, 'auth_token.add', {
    authToken: { description: TOKEN_NAME, permission: Permission.cache },
  });
  const purge = await page.request.post('/api/cache.delete', {
    headers: { Authorization: `Bearer ${encodedToken}` },
    data: { url: `http://${origins[0].name}/sample/photo.jpg` },
  });
  expect(purge.status()).toBe(200);
  await call(page, 'auth_token.disable', { authTokenID: authToken.authTokenID });
}

async function showOrganizationTrail(page: Page) {
  await page.goto('/user/activity');
  await page.getByTestId('activity-scope-organization').click();
  await expect(page.locator('[data-testid="activity-row"][data-kind="cache"]').first()).toBeVisible();
}

async function screens(page: Page, language: 'ja' | 'en') {
  for (const [width, height] of [
    [1280, 800],
    [390, 844],
  ] as const) {
    await page.setViewportSize({ width, height });
    // The purge's changes open, as a reader would look at them.
    await page
      .locator('[data-testid="activity-row"][data-operation="cache.delete"] details')
      .first()
      .evaluate((details: HTMLDetailsElement) => (details.open = true));
    await screenshot(page, `audit-trail-${width}-${language}`);
    // Nothing may push the page sideways on a phone.
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
  }
}

test('the organization’s trail lists a person’s and a token’s changes, filters them and exports CSV', async ({
  page,
}) => {
  await login(page, DEMO_OWNER.email, DEMO_OWNER.password);
  await expect(page).not.toHaveURL(/\/auth\/login$/);
  await makeChanges(page);
  await showOrganizationTrail(page);

  const purge = page.locator('[data-testid="activity-row"][data-operation="cache.delete"]').first();
  await expect(purge.getByTestId('activity-token')).toContainText(TOKEN_NAME);
  const revoke = page.locator('[data-testid="activity-row"][data-operation="auth_token.disable"]').first();
  await expect(revoke).toContainText(DEMO_OWNER.email);
  await revoke.getByTestId('activity-changes').locator('summary').click();
  await expect(revoke.getByTestId('activity-changes')).toContainText('enabled');
  await screens(page, 'ja');

  await page.setViewportSize({ width: 1280, height: 800 });
  await page.getByTestId('activity-kind').selectOption('token');
  await page.getByTestId('activity-apply').click();
  await expect(page.locator('[data-testid="activity-row"]:not([data-kind="token"])')).toHaveCount(0);
  await expect(page.locator('[data-testid="activity-row"][data-kind="token"]')).not.toHaveCount(0);

  const download = page.waitForEvent('download');
  await page.getByTestId('activity-csv').click();
  const csv = readFileSync((await (await download).path())!, 'utf8');
  expect(csv).toContain('auth_token.disable');
  expect(csv).toContain(TOKEN_NAME);
  expect(csv).not.toContain('cache.delete');

  await page.getByTestId('activity-reset').click();
  await page.getByTestId('activity-actor').fill('nobody-matches-this');
  await page.getByTestId('activity-apply').click();
  await expect(page.getByTestId('activity-empty')).toBeVisible();
});

test('the organization’s trail in English', async ({ page }) => {
  await page.goto('/auth/login');
  await page.getByTestId('language-switch').click();
  await page.getByTestId('language-en').click();
  await login(page, DEMO_OWNER.email, DEMO_OWNER.password);
  await expect(page).not.toHaveURL(/\/auth\/login$/);
  await makeChanges(page);
  await showOrganizationTrail(page);
  await expect(page.getByTestId('activity-scope-organization')).toContainText('Organization');
  await screens(page, 'en');
});
