import { expect, test } from '@playwright/test';
import { LIVE_USER } from '../support/fixtures.ts';
import { api, UI_API } from './edge.ts';
import { login, phoneAndDesktopScreenshots } from './helpers.ts';

test('the channel screen plays the channel over WebRTC beside HLS, each with its delay', async ({ page }) => {
  test.setTimeout(120_000);
  await page.addInitScript(() => window.localStorage.setItem('ukiyo.language', 'ja'));
  await login(page, LIVE_USER.email, LIVE_USER.password);
  await expect(page).toHaveURL(/\/statistics$/);
  const created = await page.request.post(api('channel.add'), {
    headers: UI_API,
    data: { hls: [{ video: { width: 640, height: 360 } }] },
  });
  expect(created.status()).toBe(200);
  const channelId = ((await created.json()) as { channel: { id: string } }).channel.id;
  await page.goto('/channel/');
  const row = page.locator(`[data-testid="channel-row"][data-channel-id="${channelId}"]`);
  await row.getByTestId('channel-open').click();
  await expect(page.getByTestId('channel-webrtc-waiting')).toBeVisible();

  await page.getByTestId('channel-publish-start').click();
  await expect(page.getByTestId('channel-publish-stop')).toHaveAttribute('data-state', 'live', {
    timeout: 20_000,
  });
  // The WHEP player starts once the channel shows on air, and plays the publisher's picture.
  const webrtc = page.getByTestId('channel-webrtc-player');
  await expect
    .poll(() => webrtc.evaluate((video: HTMLVideoElement) => video.currentTime), { timeout: 30_000 })
    .toBeGreaterThan(1);
  expect(await webrtc.evaluate((video: HTMLVideoElement) => video.videoWidth)).toBeGreaterThan(0);
  const delay = page.getByTestId('channel-webrtc-delay');
  await expect(delay).toContainText('ミリ秒');
  expect(Number(await delay.getAttribute('data-delay'))).toBeGreaterThan(0);
  const hls = page.getByTestId('channel-player');
  await expect
    .poll(() => hls.evaluate((video: HTMLVideoElement) => video.currentTime), { timeout: 30_000 })
    .toBeGreaterThan(0.5);
  await expect(page.getByTestId('channel-player-latency')).toBeVisible({ timeout: 15_000 });

  // Both players on a phone and a desktop (e2e/artifacts/channel-webrtc/).
  await phoneAndDesktopScreenshots(page, 'channel-webrtc/ja');
  await page.getByTestId('language-switch').click();
  await page.getByTestId('language-en').click();
  await expect(delay).toContainText(' ms ');
  await phoneAndDesktopScreenshots(page, 'channel-webrtc/en');

  await page.getByTestId('channel-publish-stop').click();
  await expect(page.getByTestId('channel-webrtc-waiting')).toBeVisible({ timeout: 15_000 });
  const deleted = await page.request.post(api('channel.delete'), {
    headers: UI_API,
    data: { id: channelId },
  });
  expect(deleted.status()).toBe(200);
});
