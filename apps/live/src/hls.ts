import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Hono } from 'hono';
import type { Logger } from 'pino';
import { clientAddress, type Config } from '@ukiyo/server';
import type { LiveEnv } from './api.ts';
import type { LiveCore } from './core.ts';
import { decorateMediaPlaylist } from './hls/ladder.ts';
import type { LiveMetrics, ViewerTracker } from './metrics.ts';
import type { LiveUsage } from './usage.ts';

const PLAYLIST = 'application/vnd.apple.mpegurl';
/** Marks a request passed on by a peer live process: answered from local files only (no loops). */
const PEER_HEADER = 'x-ukiyo-live-peer';
const PEER_TIMEOUT_MS = 5_000;

type Source = 'local' | 'peer';

interface Answer {
  status: number;
  body: Uint8Array;
  headers: Record<string, string>;
}

const NOT_FOUND: Answer = {
  status: 404,
  body: Buffer.from('not found'),
  headers: { 'Content-Type': 'text/plain; charset=UTF-8' },
};

/**
 * HLS output: `/hls/{channel_id}/{connection_id}/master.m3u8`, and per rendition
 * `/hls/{channel_id}/{connection_id}/{index}/index.m3u8` and `.../seg{n}.ts`. Playlists change
 * every segment (1 s cache); a segment never changes under its name (the connection id is in
 * the path), so it is cached long. Every answer from this process's files counts as HLS
 * delivery of the channel. With several live processes, a request for a channel published
 * elsewhere is passed on to the process holding it (LIVE_INTERNAL_URL), which counts it.
 */
export function mountHls(
  app: Hono<LiveEnv>,
  deps: {
    core: LiveCore;
    usage: LiveUsage;
    metrics: LiveMetrics;
    viewers: ViewerTracker;
    config: Config;
    log: Logger;
  },
): void {
  const { core, usage, metrics, viewers, config, log } = deps;
  app.use('/hls/*', async (c, next) => {
    await next();
    c.header('Access-Control-Allow-Origin', '*');
    c.header('Timing-Allow-Origin', '*');
  });

  /** A file of this process's, or undefined: counted as the channel's HLS delivery. */
  const local = async (
    channelId: string,
    connectionId: string,
    file: string,
  ): Promise<Answer | undefined> => {
    const served = core.served(channelId);
    if (!served) return undefined;
    const data = await readFile(join(served.dir, connectionId, 'hls', file)).catch(() => undefined);
    if (!data) return undefined;
    let body: Uint8Array = data;
    if (file.endsWith('/index.m3u8')) {
      const rendition = served.renditions[Number(file.split('/')[0])];
      if (rendition) body = Buffer.from(decorateMediaPlaylist(data.toString('utf8'), rendition));
    }
    usage.hls(channelId, served.organizationId, body.length);
    const playlist = file.endsWith('.m3u8');
    return {
      status: 200,
      body,
      headers: {
        'Content-Type': playlist ? PLAYLIST : 'video/mp2t',
        'Cache-Control': playlist ? 'public, max-age=1' : 'public, max-age=86400, immutable',
      },
    };
  };

  /** The answer of the peer process holding the channel, or undefined when none does. */
  const fromPeer = async (channelId: string, path: string): Promise<Answer | undefined> => {
    const peer = await core.peerOf(channelId);
    if (!peer) return undefined;
    try {
      const answer = await fetch(`${peer}${path}`, {
        headers: { [PEER_HEADER]: '1' },
        signal: AbortSignal.timeout(PEER_TIMEOUT_MS),
      });
      const headers: Record<string, string> = {};
      for (const name of ['content-type', 'cache-control']) {
        const value = answer.headers.get(name);
        if (value) headers[name] = value;
      }
      return { status: answer.status, body: new Uint8Array(await answer.arrayBuffer()), headers };
    } catch (error) {
      log.warn({ err: error, channelId, peer }, 'peer live process did not answer an HLS request');
      return {
        status: 502,
        body: Buffer.from('the live process holding this channel did not answer'),
        headers: { 'Content-Type': 'text/plain; charset=UTF-8' },
      };
    }
  };

  app.get(
    '/hls/:channel{[0-9a-f]{1,64}}/:connection{[0-9a-f]{1,64}}/:file{master\\.m3u8|[0-9]{1,2}/(?:index\\.m3u8|seg[0-9]{1,9}\\.ts)}',
    async (c) => {
      const started = performance.now();
      const channelId = c.req.param('channel');
      const file = c.req.param('file');
      const fromPeerProcess = c.req.header(PEER_HEADER) !== undefined;
      let source: Source = 'local';
      let answer = await local(channelId, c.req.param('connection'), file);
      if (!answer && !fromPeerProcess) {
        source = 'peer';
        answer = await fromPeer(channelId, c.req.path);
      }
      answer ??= NOT_FOUND;
      const playlist = file.endsWith('.m3u8');
      // Viewers and bytes are counted where the viewer's request arrived, once.
      if (!fromPeerProcess && answer.status === 200) {
        if (playlist)
          viewers.seen(channelId, `${clientAddress(c, config)} ${c.req.header('user-agent') ?? ''}`);
        metrics.hlsBytes.inc(answer.body.length);
      }
      metrics.hlsRequests.inc({
        kind: playlist ? 'playlist' : 'segment',
        status: String(answer.status),
        source,
      });
      metrics.hlsDuration.observe({ source }, (performance.now() - started) / 1000);
      return c.body(answer.body as Uint8Array<ArrayBuffer>, answer.status as 200, answer.headers);
    },
  );
}
