import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant, type TestServer, testServer } from '@ukiyo/server/testing';
import { apiToken, startStarvable, starveUntilShed, waitFor, type LiveUnderTest } from './helpers.ts';
import { publish, type Publisher } from './publisher.ts';
import { view, type WhepViewer } from './whep-viewer.ts';

// Runs alone (vitest.config.ts, MACHINE_TIMED): the test starves its own thread and reads the
// load guard's wall-clock windows, and another file's Chromium and encoders on the cores made
// them read starving before and after it meant them to (CI shed the viewer it keeps).
describe('WebRTC viewers shed from a starving thread', () => {
  let server: TestServer;
  let starving: LiveUnderTest;
  let token: string;
  const dir = mkdtempSync(join(tmpdir(), 'ukiyo-shedding-'));
  const viewers: WhepViewer[] = [];
  let publisher: Publisher | undefined;

  beforeAll(async () => {
    server = await testServer();
    starving = await startStarvable(server);
    const tenant = await createTenant(server.deps, { isLive: true });
    token = await apiToken(server, tenant.organizationIds[0]!);
  });

  afterAll(async () => {
    await Promise.all(viewers.map((viewer) => viewer.stop(false)));
    await publisher?.stop(false);
    await starving?.live.close();
  });

  it('sheds the newest viewers while the thread stays saturated, and keeps the others', async () => {
    const created = await starving.call(
      'ImageFlux_20200316.CreateMultistreamChannelWithHLS',
      {
        hls: [
          {
            durationSeconds: 1,
            video: { width: 320, height: 180, fps: 15, bps: 300_000, codec: 'h264_baseline' },
            audio: { bps: 32_000 },
          },
        ],
      },
      token,
    );
    expect(created.status).toBe(200);
    const channelId = created.body.channel_id as string;
    // The werift test publisher: H.264 320x180 at 15 fps, a keyframe every 2 s.
    publisher = await publish({
      whipUrl: `${starving.baseUrl}/whip/${channelId}`,
      token,
      codec: 'h264',
      width: 320,
      height: 180,
      fps: 15,
    });
    expect(publisher.status).toBe(201);
    // A busy machine can starve the thread in a window before the test means it to: a viewer
    // refused then (503) asks again a window later, as a player does after Retry-After, a few
    // times.
    const viewerAt = async (name: string) => {
      for (let attempt = 1; ; attempt++) {
        const viewer = await view(`${starving.baseUrl}/whep/${channelId}`, join(dir, name));
        viewers.push(viewer);
        if (viewer.status !== 503 || attempt === 5) return viewer;
        await new Promise((resolve) => setTimeout(resolve, 1_000));
      }
    };
    const older = await viewerAt('kept.h264');
    const newer = await viewerAt('shed.h264');
    for (const viewer of [older, newer]) {
      expect(viewer.status).toBe(201);
      await waitFor(async () => (viewer.frames() > 0 ? true : undefined), 10_000, 'a frame');
    }
    expect(await starveUntilShed(starving)).toBe(1);
    // The gauge reads the thread that starved (viewers served in the live process here).
    const load = await starving.live.metrics.getSingleMetric('ukiyo_live_event_loop_utilization')!.get();
    expect(load.values[0]!.value).toBeGreaterThanOrEqual(0.97);
    await newer.closed();
    // The starved thread lost packets of the older viewer too: one that reported losing more
    // than a quarter skipped to the next keyframe, which the ingest asks for every 10 s.
    const framesThen = older.frames();
    await waitFor(async () => (older.frames() > framesThen + 5 ? true : undefined), 15_000, 'more frames');
  }, 60_000);
});
