import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Hono } from 'hono';
import type { LiveEnv } from './api.ts';
import type { LiveCore } from './core.ts';
import { decorateMediaPlaylist } from './hls/ladder.ts';
import type { LiveUsage } from './usage.ts';

const PLAYLIST = 'application/vnd.apple.mpegurl';

/**
 * HLS output: `/hls/{channel_id}/{connection_id}/master.m3u8`, and per rendition
 * `/hls/{channel_id}/{connection_id}/{index}/index.m3u8` and `.../seg{n}.ts`. Playlists change
 * every segment (1 s cache); a segment never changes under its name (the connection id is in
 * the path), so it is cached long. Every answer counts as HLS delivery of the channel.
 */
export function mountHls(app: Hono<LiveEnv>, core: LiveCore, usage: LiveUsage): void {
  app.use('/hls/*', async (c, next) => {
    await next();
    c.header('Access-Control-Allow-Origin', '*');
    c.header('Timing-Allow-Origin', '*');
  });
  app.get(
    '/hls/:channel{[0-9a-f]{1,64}}/:connection{[0-9a-f]{1,64}}/:file{master\\.m3u8|[0-9]{1,2}/(?:index\\.m3u8|seg[0-9]{1,9}\\.ts)}',
    async (c) => {
      const channelId = c.req.param('channel');
      const served = core.served(channelId);
      if (!served) return c.text('not found', 404);
      const file = c.req.param('file');
      const data = await readFile(join(served.dir, c.req.param('connection'), 'hls', file)).catch(
        () => undefined,
      );
      if (!data) return c.text('not found', 404);
      let body: Uint8Array<ArrayBuffer> | string = data as Uint8Array<ArrayBuffer>;
      if (file.endsWith('/index.m3u8')) {
        const rendition = served.renditions[Number(file.split('/')[0])];
        if (rendition) body = decorateMediaPlaylist(data.toString('utf8'), rendition);
      }
      usage.hls(
        channelId,
        served.organizationId,
        typeof body === 'string' ? Buffer.byteLength(body) : body.length,
      );
      const playlist = file.endsWith('.m3u8');
      return c.body(body, 200, {
        'Content-Type': playlist ? PLAYLIST : 'video/mp2t',
        'Cache-Control': playlist ? 'public, max-age=1' : 'public, max-age=86400, immutable',
      });
    },
  );
}
