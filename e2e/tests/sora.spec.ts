import { expect, test, type Page } from '@playwright/test';
import { servePublisherPage, type SoraPublished } from '../../apps/live/test/sora-publisher.ts';
import { LIVE_PORT, LIVE_USER } from '../support/fixtures.ts';
import { api, UI_API } from './edge.ts';
import { login } from './helpers.ts';

const SIGNALING_URL = `ws://localhost:${LIVE_PORT}/signaling`;

let site: Awaited<ReturnType<typeof servePublisherPage>>;
test.beforeAll(async () => {
  site = await servePublisherPage();
});
test.afterAll(() => site.close());

async function openPublisherPage(page: Page): Promise<void> {
  await page.goto(site.url);
  await page.waitForFunction(() => 'publish' in window);
}

const publish = (page: Page, channelId: string, token: string) =>
  page.evaluate(
    async ([url, channel, bearer]) =>
      (
        await (window as unknown as { publish(...args: unknown[]): Promise<SoraPublished> }).publish(
          url,
          channel,
          bearer,
          false,
        )
      ).connectionId,
    [SIGNALING_URL, channelId, token],
  );

test('sora-js-sdk publishes from Chromium over Sora signaling and the HLS ladder plays', async ({
  page,
  context,
}) => {
  test.setTimeout(90_000);
  await login(page, LIVE_USER.email, LIVE_USER.password);
  await expect(page).toHaveURL(/\/statistics$/);
  const created = await page.request.post(api('channel.add'), {
    headers: UI_API,
    data: { hls: [{ video: { width: 640, height: 360 } }, { video: { width: 320, height: 180 } }] },
  });
  expect(created.status()).toBe(200);
  const channelId = ((await created.json()) as { channel: { id: string } }).channel.id;
  const credential = async () => {
    const answer = await page.request.post(api('channel.publish_credential'), {
      headers: UI_API,
      data: { channelId },
    });
    return ((await answer.json()) as { credential: string }).credential;
  };

  const publisher = await context.newPage();
  await openPublisherPage(publisher);
  // The same checks as WHIP's: a bad bearer is refused before any offer, with the status in
  // the close code the SDK reports.
  await expect(publish(publisher, channelId, 'not-a-token')).rejects.toThrow(/CloseEventCode:4401/);

  const connectionId = await publish(publisher, channelId, await credential());
  expect(connectionId).toMatch(/^[0-9a-f]+$/);
  await expect
    .poll(() => publisher.evaluate(() => (window as unknown as { events: string[] }).events))
    .toContain('notify:connection.created');

  // The console's channel screen shows it on air and plays its ladder with hls.js.
  await page.goto('/channel/');
  const row = page.locator(`[data-testid="channel-row"][data-channel-id="${channelId}"]`);
  await expect(row.getByTestId('channel-hls-url')).toContainText(`/${connectionId}/master.m3u8`, {
    timeout: 30_000,
  });
  const playlist = await page.request.get((await row.getByTestId('channel-hls-url').textContent()) ?? '');
  expect(await playlist.text()).toMatch(/RESOLUTION=640x360[^\n]*CODECS="avc1\.[0-9a-f]+,mp4a\.40\.2"/);
  await row.getByTestId('channel-open').click();
  const player = page.getByTestId('channel-player');
  await expect
    .poll(() => player.evaluate((video: HTMLVideoElement) => video.currentTime), { timeout: 30_000 })
    .toBeGreaterThan(0.5);

  // A second publisher on the channel is refused; the SDK's disconnect ends the first.
  const second = await context.newPage();
  await openPublisherPage(second);
  await expect(publish(second, channelId, await credential())).rejects.toThrow(/CloseEventCode:4409/);
  await publisher.evaluate(() =>
    (window as unknown as { publisher: { disconnect(): Promise<void> } }).publisher.disconnect(),
  );
  await expect(row.getByTestId('channel-connections')).toHaveText('0', { timeout: 15_000 });

  // Deleting the channel disconnects a publisher at once: the SDK reports it.
  await publish(second, channelId, await credential());
  await expect(row.getByTestId('channel-connections')).toHaveText('1', { timeout: 15_000 });
  const deleted = await page.request.post(api('channel.delete'), {
    headers: UI_API,
    data: { id: channelId },
  });
  expect(deleted.status()).toBe(200);
  await expect
    .poll(() => second.evaluate(() => (window as unknown as { events: string[] }).events), {
      timeout: 5_000,
    })
    .toContain('disconnect:normal');
});

test('sora-js-sdk views a channel recvonly on the same sora_url and its video plays', async ({
  page,
  context,
}) => {
  test.setTimeout(90_000);
  await login(page, LIVE_USER.email, LIVE_USER.password);
  await expect(page).toHaveURL(/\/statistics$/);
  const created = await page.request.post(api('channel.add'), {
    headers: UI_API,
    data: { hls: [{ video: { width: 320, height: 180 } }] },
  });
  expect(created.status()).toBe(200);
  const channelId = ((await created.json()) as { channel: { id: string } }).channel.id;
  const credential = await page.request.post(api('channel.publish_credential'), {
    headers: UI_API,
    data: { channelId },
  });
  const publisher = await context.newPage();
  await openPublisherPage(publisher);
  await publish(publisher, channelId, ((await credential.json()) as { credential: string }).credential);

  // Another page of the customer's views it: no token (the channel needs no playback token).
  const viewer = await context.newPage();
  await openPublisherPage(viewer);
  const viewerId = await viewer.evaluate(
    ([url, channel]) =>
      (window as unknown as { view(...args: unknown[]): Promise<string> }).view(url, channel, null),
    [SIGNALING_URL, channelId],
  );
  expect(viewerId).toMatch(/^[0-9a-f]{20}$/);
  const video = viewer.locator('#viewer');
  await expect
    .poll(() => video.evaluate((element: HTMLVideoElement) => element.currentTime), { timeout: 30_000 })
    .toBeGreaterThan(1);
  expect(await video.evaluate((element: HTMLVideoElement) => element.videoWidth)).toBe(640);

  await viewer.evaluate(() =>
    (window as unknown as { viewer: { disconnect(): Promise<void> } }).viewer.disconnect(),
  );
  await publisher.evaluate(() =>
    (window as unknown as { publisher: { disconnect(): Promise<void> } }).publisher.disconnect(),
  );
  const deleted = await page.request.post(api('channel.delete'), {
    headers: UI_API,
    data: { id: channelId },
  });
  expect(deleted.status()).toBe(200);
});
