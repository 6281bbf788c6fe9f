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

  const whepAnswer = page.waitForResponse(
    (response) => response.url().endsWith(`/whep/${channelId}`) && response.request().method() === 'POST',
  );
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

  // A second viewer of the channel, refused by a live server with no room for another WebRTC
  // viewer (503). This one's thread is never that busy, so the refusal is answered here as
  // the server words it (live-whep.int.test.ts makes a real server refuse): the player says so
  // in the catalogue's words, and HLS plays on beside it.
  const second = await page.context().newPage();
  await second.route(`**/whep/${channelId}`, (route) =>
    route.request().method() === 'POST'
      ? route.fulfill({
          status: 503,
          headers: { 'Retry-After': '5', 'Content-Type': 'application/json' },
          body: JSON.stringify({
            ok: false,
            error: 'this live server has no room for another WebRTC viewer now; HLS plays',
          }),
        })
      : route.fallback(),
  );
  await second.goto('/channel/');
  await second
    .locator(`[data-testid="channel-row"][data-channel-id="${channelId}"]`)
    .getByTestId('channel-open')
    .click();
  const refused = second.getByTestId('channel-webrtc-error');
  await expect(refused).toContainText('no room for another WebRTC viewer', { timeout: 30_000 });
  await expect
    .poll(
      () => second.getByTestId('channel-player').evaluate((video: HTMLVideoElement) => video.currentTime),
      {
        timeout: 30_000,
      },
    )
    .toBeGreaterThan(0.5);
  await phoneAndDesktopScreenshots(second, 'channel-webrtc/no-room-en');
  await second.getByTestId('language-switch').click();
  await second.getByTestId('language-ja').click();
  await expect(refused).toContainText('空きがありません');
  await phoneAndDesktopScreenshots(second, 'channel-webrtc/no-room-ja');
  await second.close();

  // The server ends the first viewer (as a live server short of room sheds its newest ones: it
  // goes silent): the player says playback was cut off, and HLS plays on.
  const answered = await whepAnswer;
  const viewerUrl = new URL(answered.headers()['location']!, answered.url()).toString();
  expect((await page.request.delete(viewerUrl)).status()).toBe(200);
  const lost = page.getByTestId('channel-webrtc-error');
  await expect(lost).toContainText('cut off', { timeout: 15_000 });
  const hlsTime = await hls.evaluate((video: HTMLVideoElement) => video.currentTime);
  await expect
    .poll(() => hls.evaluate((video: HTMLVideoElement) => video.currentTime), { timeout: 15_000 })
    .toBeGreaterThan(hlsTime + 0.5);
  await phoneAndDesktopScreenshots(page, 'channel-webrtc/lost-en');
  await page.getByTestId('language-switch').click();
  await page.getByTestId('language-ja').click();
  await expect(lost).toContainText('切れました');
  await phoneAndDesktopScreenshots(page, 'channel-webrtc/lost-ja');

  await page.getByTestId('channel-publish-stop').click();
  await expect(page.getByTestId('channel-webrtc-waiting')).toBeVisible({ timeout: 15_000 });
  const deleted = await page.request.post(api('channel.delete'), {
    headers: UI_API,
    data: { id: channelId },
  });
  expect(deleted.status()).toBe(200);
});
