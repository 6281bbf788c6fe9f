import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import type { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { Logger } from 'pino';
import { addressOf, clientAddress, type Config } from '@ukiyo/server';
import type { LiveEnv } from './api.ts';
import { PEER_HEADER, type LiveCore } from './core.ts';
import { decorateMediaPlaylist } from './hls/ladder.ts';
import type { LowLatencyRendition } from './hls/ll-hls.ts';
import { type Answer, PeerCache } from './hls/peer-cache.ts';
import type { PeerSignature } from './hls/peer-signature.ts';
import { PeerViewers, type ViewersReport, viewersReportSchema } from './hls/peer-viewers.ts';
import { WaitingCounts } from './hls/waiting-counts.ts';
import type { LiveMetrics, ViewerTracker } from './metrics.ts';
import type { HlsAdmission } from './viewers/hls-admission.ts';
import type { PlaybackKeys } from './playback-tokens.ts';
import type { LiveUsage } from './usage.ts';

const PLAYLIST = 'application/vnd.apple.mpegurl';
/** Where a peer reports the viewers it served a channel to (PeerViewers). */
const VIEWERS_REPORT_PATH = '/internal/hls-viewers';
/** In an answer to a peer: the organization whose delivery the peer counts. */
const ORGANIZATION_HEADER = 'x-ukiyo-live-organization';
/** A client's address and user agent are kept to this many characters (clientOf). */
const MAX_CLIENT_LENGTH = 256;
/** The peers' answers a live process keeps (parts, segments, playlists: see PeerCache). */
const PEER_CACHE_BYTES = 64 * 1024 * 1024;
/** How soon a client the live process has no room for may ask again. */
const RETRY_AFTER_SECONDS = 2;
const PEER_TIMEOUT_MS = 5_000;
/** A blocking request waits at most three target durations (RFC 8216bis 6.2.5.2), 10 s segments at most. */
const MAX_BLOCKING_MS = 3 * 10_000;
/**
 * Requests waiting at once (blocking playlist reloads and preload-hinted parts): a player holds
 * one or two per rendition, so a client (address and user agent) past a few is misbehaving, and
 * a channel's cap bounds the memory of its waiters.
 */
const MAX_WAITING_PER_CLIENT = 8;
const MAX_WAITING_PER_CHANNEL = 5_000;

type Source = 'local' | 'peer';

/** A peer's answer, with the organization whose delivery it is. */
interface PeerAnswer extends Answer {
  organizationId?: number;
}

/** Every answer is read by players on other origins, its timing too. */
const CROSS_ORIGIN = { 'Access-Control-Allow-Origin': '*', 'Timing-Allow-Origin': '*' } as const;
const IMMUTABLE = 'public, max-age=86400, immutable';
/** Answers' headers, made once rather than per request. */
const HEADERS = {
  text: { 'Content-Type': 'text/plain; charset=UTF-8', ...CROSS_ORIGIN },
  playlist: { 'Content-Type': PLAYLIST, 'Cache-Control': 'public, max-age=1', ...CROSS_ORIGIN },
  // A blocking reload's URL names one version of the playlist: it may be cached a while.
  blockingPlaylist: { 'Content-Type': PLAYLIST, 'Cache-Control': 'public, max-age=60', ...CROSS_ORIGIN },
  mp4: { 'Content-Type': 'video/mp4', 'Cache-Control': IMMUTABLE, ...CROSS_ORIGIN },
  ts: { 'Content-Type': 'video/mp2t', 'Cache-Control': IMMUTABLE, ...CROSS_ORIGIN },
} as const;

function text(status: number, message: string): Answer {
  return { status, body: Buffer.from(message), headers: HEADERS.text };
}

const NOT_FOUND = text(404, 'not found');
const NO_ROOM: Answer = {
  ...text(503, 'this live server has no room for another HLS viewer now; try again shortly'),
  headers: { ...HEADERS.text, 'Retry-After': String(RETRY_AFTER_SECONDS) },
};
/** As the app's onError answers. */
const INTERNAL_ERROR: Answer = {
  status: 500,
  body: Buffer.from(JSON.stringify({ ok: false, error: 'internal error' })),
  headers: { 'Content-Type': 'application/json', ...CROSS_ORIGIN },
};

/** What the route's path says: `:file` is `master.m3u8` or `{index}/{name}`. */
const CHANNEL = '[0-9a-f]{1,64}';
const FILE =
  'master\\.m3u8|[0-9]{1,2}/(?:index\\.m3u8|seg[0-9]{1,9}\\.(?:ts|m4s)|part[0-9]{1,9}\\.m4s|init\\.mp4)';
/** The route's path and query as the fast path reads a request's raw URL. */
const FAST_PATH = new RegExp(`^/hls/(${CHANNEL})/(${CHANNEL})/(${FILE})(?:\\?(.*))?$`);

/** One HLS request, however it arrived. */
interface HlsRequest {
  channelId: string;
  connectionId: string;
  file: string;
  /** Address and user agent: the unit of the waiting caps and of viewers. */
  client: string;
  query: { msn: string | undefined; part: string | undefined };
  /** The path and query as asked, which a peer's signature covers. */
  target: string;
  /** The request's PEER_HEADER, if any. */
  peerSignature: string | undefined;
}

/**
 * Takes a request before Hono when it can answer it alone (true), else leaves it (false).
 * See mountHls.
 */
export type HlsFastPath = (request: IncomingMessage, response: ServerResponse) => boolean;

export interface MountedHls {
  fastPath: HlsFastPath;
  /** Stops the viewers' reports to peers, once the last one is sent. */
  close(): Promise<void>;
}

/**
 * Resolves true once `subscribe`'s wake comes (the rendition reached what was asked), false
 * after `timeoutMs`.
 */
function waitFor(subscribe: (wake: () => void) => () => void, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      cancel();
      resolve(false);
    }, timeoutMs);
    const cancel = subscribe(() => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/**
 * The client of a request, its address and user agent: at most MAX_CLIENT_LENGTH characters,
 * since the admitted clients, the viewer counts and usage's distinct clients each keep one per
 * client, and a user agent may be as long as the headers are.
 */
function clientOf(address: string, userAgent: string | undefined): string {
  return `${address} ${userAgent ?? ''}`.slice(0, MAX_CLIENT_LENGTH);
}

/**
 * What a peer is asked for a request: its path and the query parameters the holder reads, in one
 * order, so that the rest of a query (anything a client adds) is neither passed on nor kept apart.
 * A playback token is not passed on: this process checked it, and every viewer of the channel
 * then shares one kept answer per file, whatever token each holds.
 */
function peerTarget({ channelId, connectionId, file, query }: HlsRequest): string {
  const parameters = new URLSearchParams();
  if (query.msn !== undefined) parameters.set('_HLS_msn', query.msn);
  if (query.part !== undefined) parameters.set('_HLS_part', query.part);
  const search = parameters.size > 0 ? `?${parameters}` : '';
  return `/hls/${channelId}/${connectionId}/${file}${search}`;
}

/** `_HLS_msn` / `_HLS_part`: absent, a number, or malformed. */
function directive(value: string | undefined): number | undefined | null {
  if (value === undefined) return undefined;
  return /^[0-9]{1,9}$/.test(value) ? Number(value) : null;
}

/**
 * HLS output: `/hls/{channel_id}/{connection_id}/master.m3u8`, and per rendition
 * `/hls/{channel_id}/{connection_id}/{index}/index.m3u8` and `.../seg{n}.ts`. Playlists change
 * every segment (1 s cache); a segment never changes under its name (the connection id is in
 * the path), so it is cached long. Every answer from this process's files counts as HLS
 * delivery of the channel. With several live processes, a request for a channel published
 * elsewhere is passed on to the process holding it (LIVE_INTERNAL_URL), signed as a peer's, and
 * its answer kept as a shared cache would (hls/peer-cache.ts): viewers spread over the processes
 * cost the holder a request per file per process. The process a viewer asked counts its
 * delivery, for the organization the holder names in its answer, and reports the viewer to the
 * holder (hls/peer-viewers.ts), which counts the channel's distinct viewers.
 *
 * Each process answers its viewers' requests on this thread, so it admits them (`admission`,
 * viewers/hls-admission.ts): a new client's request waits a few seconds for room, and one still
 * without is answered 503 with Retry-After.
 *
 * Unencrypted channels' media playlists are Low-Latency HLS from memory (hls/ll-hls.ts):
 * `init.mp4`, parts `part{n}.m4s`, segments `seg{msn}.m4s`, blocking playlist reload with
 * `_HLS_msn` / `_HLS_part`, and a request for the preload-hinted part waits for it. Encrypted
 * channels keep the MPEG-TS playlists ffmpeg writes.
 *
 * A viewer makes about six requests a second (a blocking reload and a part per part), so the
 * route is also served without Hono: the returned fast path takes the GETs of channels known to
 * need no playback token straight from the HTTP server (no Request/Response objects, no
 * middleware), and answers them exactly as the route does. Others (tokens, HEAD, channels not
 * looked up lately, paths only Hono's decoding matches) go through Hono.
 */
export function mountHls(
  app: Hono<LiveEnv>,
  deps: {
    core: LiveCore;
    usage: LiveUsage;
    metrics: LiveMetrics;
    viewers: ViewerTracker;
    admission: HlsAdmission;
    playbackKeys: PlaybackKeys;
    peerSignature: PeerSignature;
    config: Config;
    log: Logger;
  },
): MountedHls {
  const { core, usage, metrics, viewers, admission, playbackKeys, peerSignature, config, log } = deps;
  const peerCache = new PeerCache(PEER_CACHE_BYTES);
  const peerViewers = new PeerViewers(async (peer, report: ViewersReport) => {
    const body = JSON.stringify(report);
    try {
      const answer = await fetch(`${peer}${VIEWERS_REPORT_PATH}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', [PEER_HEADER]: peerSignature.sign(body) },
        body,
        signal: AbortSignal.timeout(PEER_TIMEOUT_MS),
      });
      if (answer.status !== 204) throw new Error(`answered ${answer.status}`);
    } catch (error) {
      log.warn({ err: error, channelId: report.channelId, peer }, 'peer live process took no viewers report');
    }
  });
  // A peer's report: the viewers it served a channel of this process's to. A request without
  // the peer header is refused before its body is read.
  app.post(
    VIEWERS_REPORT_PATH,
    async (c, next) => (c.req.header(PEER_HEADER) === undefined ? c.text('not a peer', 403) : next()),
    bodyLimit({ maxSize: 8 * 1024 * 1024, onError: (c) => c.text('too large', 413) }),
    async (c) => {
      const body = await c.req.text();
      if (!peerSignature.verify(body, c.req.header(PEER_HEADER))) return c.text('not a peer', 403);
      let report: ViewersReport;
      try {
        report = viewersReportSchema.parse(JSON.parse(body));
      } catch {
        return c.text('not a viewers report', 400);
      }
      const served = core.served(report.channelId);
      if (served) usage.hlsViewers(report.channelId, served.organizationId, report.clients);
      return c.body(null, 204);
    },
  );
  // Set before the answer is made, so that it is made with them (set after, Hono makes it again).
  app.use('/hls/*', async (c, next) => {
    for (const [name, value] of Object.entries(CROSS_ORIGIN)) c.header(name, value);
    await next();
  });

  const waitingPerClient = new WaitingCounts(MAX_WAITING_PER_CLIENT);
  const waitingPerChannel = new WaitingCounts(MAX_WAITING_PER_CHANNEL);

  /**
   * `wait`'s result, waited for within the caps, else the answer saying why not. A peer (`client`
   * undefined) has no cap of its own: it asks once per file, however many of its viewers wait
   * (PeerCache), and caps them itself.
   */
  const capped = async <T>(
    channelId: string,
    client: string | undefined,
    wait: () => Promise<T>,
  ): Promise<T | Answer> => {
    if (!waitingPerChannel.take(channelId)) return text(429, 'too many waiting requests for this channel');
    if (client !== undefined && !waitingPerClient.take(client)) {
      waitingPerChannel.release(channelId);
      return text(429, 'too many waiting requests from this client');
    }
    metrics.hlsRequestsHeld.inc();
    try {
      return await wait();
    } finally {
      metrics.hlsRequestsHeld.dec();
      if (client !== undefined) waitingPerClient.release(client);
      waitingPerChannel.release(channelId);
    }
  };

  /**
   * Waits, within the caps, for `subscribe`'s wake (the caller checked it is not there yet):
   * undefined once it comes, else the answer saying why not.
   */
  const hold = (
    channelId: string,
    client: string | undefined,
    subscribe: (wake: () => void) => () => void,
    timeoutMs: number,
  ): Promise<Answer | undefined> =>
    capped(channelId, client, async () =>
      (await waitFor(subscribe, timeoutMs)) ? undefined : text(503, 'not produced in time'),
    );

  /** An LL-HLS playlist, blocking until `_HLS_msn` / `_HLS_part` when asked (RFC 8216bis 6.2.5.2). */
  const lowLatencyPlaylist = async (
    channelId: string,
    client: string | undefined,
    rendition: LowLatencyRendition,
    query: { msn: string | undefined; part: string | undefined },
    targetDuration: number,
  ): Promise<Answer | Uint8Array | undefined> => {
    const msn = directive(query.msn);
    const part = directive(query.part);
    if (msn === null || part === null || (part !== undefined && msn === undefined))
      return text(400, '_HLS_msn and _HLS_part are numbers, and _HLS_part needs _HLS_msn');
    if (msn !== undefined) {
      const newest = rendition.position?.msn ?? -1;
      if (msn > newest + 2) return text(400, '_HLS_msn is more than two segments ahead of the playlist');
    }
    if (msn !== undefined && !rendition.reached(msn, part)) {
      const refused = await hold(
        channelId,
        client,
        (wake) => rendition.whenReached(msn, part, wake),
        3 * targetDuration * 1000,
      );
      if (refused) return refused;
    }
    return rendition.playlistBytes();
  };

  /** An LL-HLS file from memory, or undefined when it is not there. */
  const lowLatencyFile = async (
    channelId: string,
    client: string | undefined,
    rendition: LowLatencyRendition,
    name: string,
  ): Promise<Answer | Uint8Array | undefined> => {
    if (name === 'init.mp4') return rendition.initSegment;
    const segment = /^seg([0-9]+)\.m4s$/.exec(name);
    if (segment) return rendition.segment(Number(segment[1]));
    const part = Number(/^part([0-9]+)\.m4s$/.exec(name)?.[1]);
    // The preload-hinted part is asked for before it exists: it is sent as soon as it does.
    if (part === rendition.hintedPart) {
      const refused = await hold(
        channelId,
        client,
        (wake) => rendition.whenPart(part, wake),
        MAX_BLOCKING_MS,
      );
      if (refused) return refused;
    }
    return rendition.part(part);
  };

  /**
   * A file of this process's, or undefined: counted as the channel's HLS delivery, or for a peer,
   * answered with the organization it counts it for.
   */
  const local = async (
    channelId: string,
    connectionId: string,
    file: string,
    client: string,
    query: { msn: string | undefined; part: string | undefined },
    forPeer: boolean,
  ): Promise<Answer | undefined> => {
    const served = core.served(channelId);
    if (!served) return undefined;
    const delivered = (answer: Answer): Answer => {
      if (forPeer)
        return {
          ...answer,
          headers: { ...answer.headers, [ORGANIZATION_HEADER]: String(served.organizationId) },
        };
      usage.hls(channelId, served.organizationId, answer.body.length, client);
      return answer;
    };
    const [index, name] = file.split('/');
    const rendition = served.connectionId === connectionId ? served.lowLatency?.[Number(index)] : undefined;
    if (rendition && name) {
      const waiter = forPeer ? undefined : client;
      const found =
        name === 'index.m3u8'
          ? await lowLatencyPlaylist(
              channelId,
              waiter,
              rendition,
              query,
              served.renditions[Number(index)]!.durationSeconds,
            )
          : await lowLatencyFile(channelId, waiter, rendition, name);
      if (!found) return undefined;
      if (!(found instanceof Uint8Array)) return found;
      const headers =
        name !== 'index.m3u8'
          ? HEADERS.mp4
          : query.msn === undefined
            ? HEADERS.playlist
            : HEADERS.blockingPlaylist;
      return delivered({ status: 200, body: found, headers });
    }
    const data = await readFile(join(core.channelDir(channelId), connectionId, 'hls', file)).catch(
      () => undefined,
    );
    if (!data) return undefined;
    let body: Uint8Array = data;
    if (file.endsWith('/index.m3u8')) {
      const rendition = served.renditions[Number(file.split('/')[0])];
      if (rendition) body = Buffer.from(decorateMediaPlaylist(data.toString('utf8'), rendition));
    }
    return delivered({ status: 200, body, headers: file.endsWith('.m3u8') ? HEADERS.playlist : HEADERS.ts });
  };

  /**
   * The answer of `peer`, the process holding the channel: kept, being fetched for another
   * viewer, or fetched now.
   */
  const fromPeer = (
    peer: string,
    channelId: string,
    target: string,
    blocking: boolean,
  ): Promise<PeerAnswer> =>
    peerCache.get(target, async () => {
      try {
        const answer = await fetch(`${peer}${target}`, {
          headers: { [PEER_HEADER]: peerSignature.sign(target) },
          signal: AbortSignal.timeout(PEER_TIMEOUT_MS + (blocking ? MAX_BLOCKING_MS : 0)),
        });
        const headers: Record<string, string> = { ...CROSS_ORIGIN };
        for (const name of ['content-type', 'cache-control', 'retry-after']) {
          const value = answer.headers.get(name);
          if (value) headers[name] = value;
        }
        const organization = Number(answer.headers.get(ORGANIZATION_HEADER));
        return {
          status: answer.status,
          body: Buffer.from(await answer.arrayBuffer()),
          headers,
          ...(Number.isInteger(organization) && organization > 0 ? { organizationId: organization } : {}),
        };
      } catch (error) {
        log.warn({ err: error, channelId, peer }, 'peer live process did not answer an HLS request');
        return text(502, 'the live process holding this channel did not answer');
      }
    });

  /** Answers, counts and measures one request. */
  const serve = async (request: HlsRequest): Promise<Answer> => {
    const started = performance.now();
    const { channelId, file, client, target } = request;
    const fromPeerProcess = peerSignature.verify(target, request.peerSignature);
    let source: Source = 'local';
    const held = core.served(channelId) !== undefined;
    const peer = held || fromPeerProcess ? undefined : await core.peerOf(channelId);
    // Admitted by the process the viewer asked, for the channels some process holds.
    const refused =
      !fromPeerProcess && (held || peer !== undefined) && !(await admission.admit(`${channelId}\n${client}`));
    if (refused) metrics.hlsRefused.inc();
    let answer: PeerAnswer | undefined = refused
      ? NO_ROOM
      : await local(channelId, request.connectionId, file, client, request.query, fromPeerProcess);
    if (!answer && peer !== undefined) {
      source = 'peer';
      // Every LL-HLS request may wait there (blocking reloads, the hinted part): within the caps
      // of waiting requests here, as at the holder.
      const asked = peerTarget(request);
      answer = file.endsWith('.ts')
        ? await fromPeer(peer, channelId, asked, false)
        : await capped(channelId, client, () => fromPeer(peer, channelId, asked, true));
      if (answer.status === 200 && answer.organizationId !== undefined) {
        usage.hls(channelId, answer.organizationId, answer.body.length, client);
        peerViewers.seen(peer, channelId, client);
      }
    }
    answer ??= NOT_FOUND;
    const playlist = file.endsWith('.m3u8');
    // Viewers and bytes are counted where the viewer's request arrived, once.
    if (!fromPeerProcess && answer.status === 200) {
      if (playlist) viewers.seen(channelId, client);
      metrics.hlsBytes.inc(answer.body.length);
    }
    metrics.hlsRequests.inc({
      kind: playlist ? 'playlist' : 'segment',
      status: String(answer.status),
      source,
    });
    metrics.hlsDuration.observe({ source }, (performance.now() - started) / 1000);
    return answer;
  };

  app.get(`/hls/:channel{${CHANNEL}}/:connection{${CHANNEL}}/:file{${FILE}}`, async (c) => {
    const answer = await serve({
      channelId: c.req.param('channel'),
      connectionId: c.req.param('connection'),
      file: c.req.param('file'),
      client: clientOf(clientAddress(c, config), c.req.header('user-agent')),
      query: { msn: c.req.query('_HLS_msn'), part: c.req.query('_HLS_part') },
      target: `${c.req.path}${new URL(c.req.url).search}`,
      peerSignature: c.req.header(PEER_HEADER),
    });
    return c.body(answer.body as Uint8Array<ArrayBuffer>, answer.status as 200, { ...answer.headers });
  });

  const fastPath: HlsFastPath = (req, res) => {
    const match = req.method === 'GET' ? FAST_PATH.exec(req.url ?? '') : null;
    if (!match || !playbackKeys.knownOpen(match[1]!)) return false;
    const [url, channelId, connectionId, file, search] = match as [string, string, string, string, string?] &
      RegExpExecArray;
    const query = search === undefined ? undefined : new URLSearchParams(search);
    const { headers } = req;
    // Node joins repeated headers into one string (set-cookie aside), as Fetch's Headers do.
    const forwardedFor = headers['x-forwarded-for'] as string | undefined;
    const address = addressOf(forwardedFor, req.socket.remoteAddress, config);
    serve({
      channelId,
      connectionId,
      file,
      client: clientOf(address, headers['user-agent']),
      query: {
        msn: query?.get('_HLS_msn') ?? undefined,
        part: query?.get('_HLS_part') ?? undefined,
      },
      target: url,
      peerSignature: headers[PEER_HEADER] as string | undefined,
    }).then(
      (answer) => send(res, answer),
      (error: unknown) => {
        log.error({ err: error }, 'live request failed');
        send(res, INTERNAL_ERROR);
      },
    );
    return true;
  };
  return { fastPath, close: () => peerViewers.close() };
}

function send(response: ServerResponse, answer: Answer): void {
  // Headers given to writeHead are sent as they are: end() adds no length to them.
  response
    .writeHead(answer.status, { ...answer.headers, 'Content-Length': answer.body.length })
    .end(answer.body);
}
