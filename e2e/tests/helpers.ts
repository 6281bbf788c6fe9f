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
 * Submits the channel form and returns the row of the channel it made, by the id its
 * `channel.add` answered: the organization's list refreshes around the submit with other tests'
 * channels coming and going (a CI run saw one deleted in between), so neither the row count nor
 * the ids not listed before name it.
 */
export async function submitChannelForm(page: Page) {
  const added = page.waitForResponse((response) => response.url().includes('/.ui-api/channel.add'));
  await page.getByTestId('channel-submit').click();
  const answer = await added;
  expect(answer.status()).toBe(200);
  const { channel } = (await answer.json()) as { channel: { id: string } };
  const row = page.locator(`[data-testid="channel-row"][data-channel-id="${channel.id}"]`);
  await expect(row).toBeVisible();
  return row;
}
