import { expect, test, type Page } from '@playwright/test';
import { LIVE_PORT, LIVE_RTMP_PORT, LIVE_USER } from '../support/fixtures.ts';
import { login, screenshot, submitChannelForm } from './helpers.ts';

async function signIn(page: Page, language: 'ja' | 'en') {
  await page.addInitScript((value) => window.localStorage.setItem('ukiyo.language', value), language);
  await login(page, LIVE_USER.email, LIVE_USER.password);
  await expect(page).toHaveURL(/\/statistics$/);
  await page.goto('/channel/');
}

/** The channel screen while publishing, on a desktop and a phone (e2e/artifacts/channel-publish/). */
async function publishScreenshots(page: Page, language: 'ja' | 'en') {
  for (const [width, height] of [
    [390, 844],
    [1280, 800],
  ] as const) {
    await page.setViewportSize({ width, height });
    // Long URLs wrap inside their boxes: nothing widens the page.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
    await screenshot(page, `channel-publish/${language}-${width}x${height}`);
  }
}

test.describe.serial('live channels', () => {
  /** The channel the first test published to: its usage shows on the statistics screens. */
  let publishedChannel = '';

  test('a channel is created from the ladder editor, published to from the page and played', async ({
    page,
  }) => {
    test.setTimeout(90_000);
    await signIn(page, 'ja');
    await page.getByTestId('channel-rung-width').first().fill('20');
    await page.getByTestId('channel-submit').click();
    await expect(
      page.getByTestId('channel-form').getByText('36以上4096以下の値を入力してください'),
    ).toBeVisible();
    await page.getByTestId('channel-rung-width').first().fill('640');
    await page.getByTestId('channel-rung-height').first().fill('360');
    await page.getByTestId('channel-rung-width').nth(1).fill('320');
    await page.getByTestId('channel-rung-height').nth(1).fill('180');
    const row = await submitChannelForm(page);
    await expect(page.getByTestId('flash-bar')).toContainText('を作成しました');
    await expect(row.getByTestId('channel-status')).toHaveAttribute('data-status', 'normal');
    await expect(row).toContainText('640×360 30fps 2500 kbps');
    publishedChannel = (await row.getAttribute('data-channel-id')) ?? '';

    await row.getByTestId('channel-open').click();
    // Where other software publishes, each with its copy button.
    const info = page.getByTestId('channel-publish-info');
    const expected = {
      'channel-whip-url': `http://localhost:${LIVE_PORT}/whip/${publishedChannel}`,
      'channel-sora-url': `ws://localhost:${LIVE_PORT}/signaling`,
      'channel-info-id': publishedChannel,
    };
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
    for (const [testId, text] of Object.entries(expected)) {
      await expect(info.getByTestId(testId)).toHaveText(text);
      await info.getByTestId(`${testId}-copy`).click();
      await expect(page.getByTestId('flash-bar')).toContainText('クリップボードにコピーしました');
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(text);
    }
    // Encoders: the RTMP server in clear, the stream key and the SRT URL hidden until shown.
    await expect(info.getByTestId('channel-rtmp-url')).toHaveText(`rtmp://localhost:${LIVE_RTMP_PORT}/live`);
    await expect(info.getByTestId('channel-rtmps-url')).toHaveCount(0);
    const streamKey = info.getByTestId('channel-stream-key');
    const srtUrl = info.getByTestId('channel-srt-url');
    await expect(streamKey).not.toContainText(publishedChannel);
    await expect(srtUrl).not.toContainText('srt://');
    await info.getByTestId('channel-stream-key-copy').click();
    const copiedKey = await page.evaluate(() => navigator.clipboard.readText());
    expect(copiedKey).toMatch(new RegExp(`^${publishedChannel}\\.[A-Za-z0-9_-]{32}$`));
    await info.getByTestId('channel-stream-key-toggle').click();
    await expect(streamKey).toHaveText(copiedKey);
    await info.getByTestId('channel-srt-url-toggle').click();
    await expect(srtUrl).toContainText(`srt://localhost:`);
    await expect(srtUrl).toContainText(`streamid=${publishedChannel}`);
    await expect(info.getByTestId('channel-obs-hint')).toContainText('OBS');
    const onAir = info.getByTestId('channel-on-air');
    await expect(onAir).toHaveAttribute('data-on-air', 'false');
    await expect(row.getByTestId('channel-on-air')).toHaveCount(0);

    // The signed-in session publishes: no token to paste.
    await expect(page.getByTestId('channel-publish-token')).toHaveCount(0);
    await page.getByTestId('channel-publish-start').click();
    await expect(page.getByTestId('channel-publish-stop')).toHaveAttribute('data-state', 'live', {
      timeout: 20_000,
    });
    await expect(row.getByTestId('channel-connections')).toHaveText('1', { timeout: 15_000 });
    await expect(onAir).toHaveAttribute('data-on-air', 'true', { timeout: 10_000 });
    await expect(onAir).toHaveText('配信中');
    await expect(row.getByTestId('channel-on-air')).toBeVisible();
    await expect(row.getByTestId('channel-hls-url')).toContainText('.m3u8', { timeout: 30_000 });
    // hls.js plays the ladder: the video advances.
    const player = page.getByTestId('channel-player');
    await expect
      .poll(() => player.evaluate((video: HTMLVideoElement) => video.currentTime), { timeout: 30_000 })
      .toBeGreaterThan(0.5);
    await screenshot(page, 'channel-live-ja');
    await publishScreenshots(page, 'ja');
    await page.getByTestId('language-switch').click();
    await page.getByTestId('language-en').click();
    await expect(onAir).toHaveText('On air');
    await publishScreenshots(page, 'en');
    await page.getByTestId('channel-publish-stop').click();
    await expect(row.getByTestId('channel-connections')).toHaveText('0', { timeout: 15_000 });
    await expect(onAir).toHaveAttribute('data-on-air', 'false', { timeout: 10_000 });
    await expect(onAir).toHaveText('Off air');

    await row.getByTestId('channel-delete').click();
    await page.getByTestId('channel-delete-confirm').click();
    await expect(row).toHaveCount(0, { timeout: 15_000 });
  });

  test('the published channel in WebRTC and HLS statistics, in English', async ({ page }) => {
    test.setTimeout(60_000);
    await signIn(page, 'en');
    await expect(page.getByTestId('channel-form')).toBeVisible();
    await screenshot(page, 'channel-en');

    // The live process writes usage every few seconds: reload until the channel's row is there.
    const reloadUntilVisible = async (path: string, testId: string) => {
      const row = page.locator(`[data-testid="${testId}"]`, { hasText: publishedChannel });
      await expect(async () => {
        await page.goto(path);
        await expect(row).toBeVisible({ timeout: 2_000 });
      }).toPass({ timeout: 30_000 });
      return row;
    };
    const webrtc = await reloadUntilVisible('/livestreaming/', 'live-statistics-row');
    await expect(page.getByRole('heading', { name: 'Live streaming info' })).toBeVisible();
    // Channel, WebRTC connections, connected time, the most at once, ...: the publisher
    // and the channel screen's WebRTC player, a viewer, connected at once.
    await expect(webrtc.locator('td').nth(1)).toHaveText('2');
    await expect(webrtc.locator('td').nth(3)).toHaveText('2');
    // The publisher's own time, and the channel screen's hls.js player, an HLS viewer.
    await expect(webrtc.getByTestId('live-statistics-publishing')).toHaveText(/[1-9]/);
    await expect(webrtc.getByTestId('live-statistics-hls-viewers')).toHaveText(/^[1-9]/);
    await screenshot(page, 'livestreaming-en');

    const hls = await reloadUntilVisible('/statistics', 'stats-row');
    await expect(page.getByRole('heading', { name: 'HLS statistics' })).toBeVisible();
    await expect(page.getByRole('columnheader', { name: 'HLS requests' })).toBeVisible();
    await expect(hls.getByTestId('stats-row-requests')).toHaveText(/^[1-9]/);
    await expect(page.getByTestId('stats-chart')).toHaveAttribute('data-state', 'ready');
    await expect(page.getByTestId('usage-webrtc')).toHaveText(/^[1-9]/);
    await screenshot(page, 'hls-statistics-en');
  });
});
