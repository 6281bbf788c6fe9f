import { expect, test, type Page } from '@playwright/test';
import { LIVE_USER } from '../support/fixtures.ts';
import { login, screenshot, submitChannelForm } from './helpers.ts';

/** hls.js in low-latency mode holds PART-HOLD-BACK (three 0.4 s parts) behind the live edge. */
const LATENCY_BOUND_SECONDS = 3;

async function latencyScreenshots(page: Page, language: 'ja' | 'en') {
  for (const [width, height] of [
    [390, 844],
    [1280, 800],
  ] as const) {
    await page.setViewportSize({ width, height });
    await page.getByTestId('channel-player').scrollIntoViewIfNeeded();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
    await screenshot(page, `channel-llhls/${language}-${width}x${height}`);
  }
}

test('hls.js plays a channel as Low-Latency HLS and shows how far behind the live edge it is', async ({
  page,
}) => {
  test.setTimeout(90_000);
  await page.addInitScript(() => window.localStorage.setItem('ukiyo.language', 'ja'));
  // The player's first two master playlist requests are refused as a live process without room
  // refuses them: hls.js's default policy would give up after one retry, the console's rides it out.
  let refusals = 0;
  await page.route('**/master.m3u8*', async (route) => {
    if (refusals >= 2) return route.continue();
    refusals++;
    await route.fulfill({
      status: 503,
      headers: { 'Retry-After': '2', 'Access-Control-Allow-Origin': '*' },
      contentType: 'text/plain; charset=UTF-8',
      body: 'this live server has no room for another HLS viewer now; try again shortly',
    });
  });
  await login(page, LIVE_USER.email, LIVE_USER.password);
  await expect(page).toHaveURL(/\/statistics$/);
  await page.goto('/channel/');
  await page.getByTestId('channel-rung-width').first().fill('640');
  await page.getByTestId('channel-rung-height').first().fill('360');
  await page.getByTestId('channel-rung-width').nth(1).fill('320');
  await page.getByTestId('channel-rung-height').nth(1).fill('180');
  const row = await submitChannelForm(page);
  await expect(row.getByTestId('channel-status')).toHaveAttribute('data-status', 'normal');
  await row.getByTestId('channel-open').click();
  await page.getByTestId('channel-publish-start').click();
  await expect(page.getByTestId('channel-publish-stop')).toHaveAttribute('data-state', 'live', {
    timeout: 20_000,
  });
  await expect(row.getByTestId('channel-hls-url')).toContainText('.m3u8', { timeout: 30_000 });

  // The channel is unencrypted: its playlists have parts, and hls.js follows them.
  const mode = page.getByTestId('channel-player-mode');
  await expect(mode).toHaveAttribute('data-low-latency', 'true', { timeout: 30_000 });
  expect(refusals).toBe(2);
  await expect(mode).toHaveText('低遅延HLS（部分セグメント）');
  const player = page.getByTestId('channel-player');
  await expect
    .poll(() => player.evaluate((video: HTMLVideoElement) => video.currentTime), { timeout: 30_000 })
    .toBeGreaterThan(1);
  const latency = page.getByTestId('channel-player-latency');
  await expect
    .poll(async () => Number(await latency.getAttribute('data-latency')), { timeout: 20_000 })
    .toBeLessThan(LATENCY_BOUND_SECONDS);
  console.log(`hls.js latency behind the live edge: ${await latency.getAttribute('data-latency')} s`);
  await expect(latency).toContainText('ライブエッジから');
  // It keeps playing: the playhead moves on four seconds within twelve (a loaded 2-core CI machine
  // stalls the decoder and the encoders now and then, two seconds in six at worst seen; a
  // stopped player moves not at all).
  const playhead = () => player.evaluate((video: HTMLVideoElement) => video.currentTime);
  const before = await playhead();
  await expect.poll(playhead, { timeout: 12_000 }).toBeGreaterThan(before + 4);
  // After such a stall the player catches up (faster playback) to its distance from the edge.
  await expect
    .poll(async () => Number(await latency.getAttribute('data-latency')), { timeout: 15_000 })
    .toBeLessThan(LATENCY_BOUND_SECONDS);
  await latencyScreenshots(page, 'ja');

  await page.getByTestId('language-switch').click();
  await page.getByTestId('language-en').click();
  await expect(mode).toHaveText('Low-Latency HLS (parts)');
  await expect(latency).toContainText('behind the live edge');
  await latencyScreenshots(page, 'en');
  // Still playing after all that: never stopped at the end of what was buffered.
  const state = () =>
    player.evaluate((video: HTMLVideoElement) => ({ paused: video.paused, ended: video.ended }));
  expect(await state()).toEqual({ paused: false, ended: false });
  const later = await playhead();
  await page.waitForTimeout(2000);
  expect(await playhead()).toBeGreaterThan(later + 1.5);

  await page.getByTestId('channel-publish-stop').click();
  await expect(row.getByTestId('channel-connections')).toHaveText('0', { timeout: 15_000 });
  await row.getByTestId('channel-delete').click();
  await page.getByTestId('channel-delete-confirm').click();
  await expect(row).toHaveCount(0, { timeout: 15_000 });
});
