import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import type { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { Logger } from 'pino';
import { addressOf, clientAddress, type Config } from '@ukiyo/server';
import type { LiveEnv } from './api.ts';
import type { LiveCore } from './core.ts';
import { decorateMediaPlaylist } from './hls/ladder.ts';
import {
  type Answer,
  type BlockingQuery,
  clientOf,
  CROSS_ORIGIN,
  HeldRequests,
  HEADERS,
  lowLatencyAnswer,
  MAX_BLOCKING_MS,
  NO_ROOM,
  NOT_FOUND,
  text,
} from './hls/answers.ts';
import { PeerCache } from './hls/peer-cache.ts';
import { PEER_HEADER, type PeerSignature } from './hls/peer-signature.ts';
import { PeerViewers, type ViewersReport, viewersReportSchema } from './hls/peer-viewers.ts';
import type { LiveMetrics, ViewerTracker } from './metrics.ts';
import type { HlsAdmission } from './viewers/hls-admission.ts';
import type { HlsServedReport } from './viewers/hls-serving.ts';
import type { PlaybackKeys } from './playback-tokens.ts';
import type { LiveUsage } from './usage.ts';

/** Where a peer reports the viewers it served a channel to (PeerViewers). */
const VIEWERS_REPORT_PATH = '/internal/hls-viewers';
/** In an answer to a peer: the organization whose delivery the peer counts. */
const ORGANIZATION_HEADER = 'x-ukiyo-live-organization';
/** The peers' answers a live process keeps (parts, segments, playlists: see PeerCache). */
const PEER_CACHE_BYTES = 64 * 1024 * 1024;
const PEER_TIMEOUT_MS = 5_000;

type Source = 'local' | 'peer';

/** A peer's answer, with the organization whose delivery it is. */
interface PeerAnswer extends Answer {
  organizationId?: number;
}

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
  query: BlockingQuery;
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
  /** What a viewer process answered (viewers/hls-serving.ts), counted as this process counts its own. */
  countServed(report: HlsServedReport): void;
  /** Requests held now on this thread. */
  readonly held: number;
  /** Stops the viewers' reports to peers, once the last one is sent. */
  close(): Promise<void>;
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
 * without is answered 503 with Retry-After. LL-HLS connections are answered in the viewer
 * processes instead (viewers/hls-serving.ts), the same way (hls/answers.ts); `countServed`
 * counts what they report.
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

  const held = new HeldRequests();

  /**
   * A file of this process's, or undefined: counted as the channel's HLS delivery, or for a peer,
   * answered with the organization it counts it for.
   */
  const local = async (
    channelId: string,
    connectionId: string,
    file: string,
    client: string,
    query: BlockingQuery,
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
      const found = await lowLatencyAnswer(
        held,
        channelId,
        forPeer ? undefined : client,
        rendition,
        name,
        query,
        served.renditions[Number(index)]!.durationSeconds,
      );
      return found && (found.status === 200 ? delivered(found) : found);
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
    const hosted = core.served(channelId);
    const holding = hosted || fromPeerProcess ? undefined : await core.peerHolding(channelId);
    const peer = holding?.url;
    // Admitted by the process the viewer asked, for the channels some process holds.
    const organizationId = (hosted ?? holding)?.organizationId;
    const refused =
      !fromPeerProcess &&
      organizationId !== undefined &&
      !(await admission.admit({ organizationId, channelId }, client));
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
        : await held.capped(channelId, client, () => fromPeer(peer, channelId, asked, true));
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
  const countServed = (report: HlsServedReport) => {
    for (const { channelId, organizationId, requests, bytes, clients, watching } of report.channels) {
      usage.hlsAnswers(channelId, organizationId, requests, bytes, clients);
      for (const client of watching) viewers.seen(channelId, client);
      metrics.hlsBytes.inc(bytes);
    }
    for (const { kind, status, count } of report.answers)
      metrics.hlsRequests.inc({ kind, status: String(status), source: 'local' }, count);
    for (const seconds of report.durations) metrics.hlsDuration.observe({ source: 'local' }, seconds);
    metrics.hlsRefused.inc(report.refused);
    if (report.shed > 0) {
      metrics.hlsShed.inc(report.shed);
      log.warn(
        { shed: report.shed },
        'a viewer process answering HLS stays saturated: shedding its newest clients',
      );
    }
  };
  return {
    fastPath,
    countServed,
    get held() {
      return held.count;
    },
    close: () => peerViewers.close(),
  };
}

function send(response: ServerResponse, answer: Answer): void {
  // Headers given to writeHead are sent as they are: end() adds no length to them.
  response
    .writeHead(answer.status, { ...answer.headers, 'Content-Length': answer.body.length })
    .end(answer.body);
}
