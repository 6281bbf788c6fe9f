import { mkdirSync } from 'node:fs';
import { expect, type Page } from '@playwright/test';

export const ARTIFACTS = new URL('../artifacts/', import.meta.url).pathname;
mkdirSync(ARTIFACTS, { recursive: true });

export async function login(page: Page, email: string, password: string) {
  await page.goto('/auth/login');
  await page.getByTestId('login-email').fill(email);
  await page.getByTestId('login-password').fill(password);
  await page.getByTestId('login-submit').click();
}

export async function screenshot(page: Page, name: string) {
  await page.screenshot({ path: `${ARTIFACTS}${name}.png`, fullPage: true });
}

/**
 * The page on a phone (390x844) and a desktop (1280x800), `{name}-{width}x{height}.png`, after
 * checking that nothing widens it beyond the screen.
 */
export async function phoneAndDesktopScreenshots(page: Page, name: string) {
  for (const [width, height] of [
    [390, 844],
    [1280, 800],
  ] as const) {
    await page.setViewportSize({ width, height });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
    await screenshot(page, `${name}-${width}x${height}`);
  }
}

/**
 * Submits the channel form and returns the row of the channel it made: found by the id that
 * was not listed before, so a channel left by an earlier attempt (a retried test) is never
 * mistaken for it.
 */
export async function submitChannelForm(page: Page) {
  const rows = page.getByTestId('channel-row');
  const ids = () => rows.evaluateAll((listed) => listed.map((row) => row.getAttribute('data-channel-id')));
  const before = await ids();
  await page.getByTestId('channel-submit').click();
  await expect(rows).toHaveCount(before.length + 1);
  const created = (await ids()).find((id) => !before.includes(id));
  return page.locator(`[data-testid="channel-row"][data-channel-id="${created}"]`);
}
