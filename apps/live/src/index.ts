import type { Server as NetServer } from 'node:net';
import type { Server as TlsServer } from 'node:tls';
import { join } from 'node:path';
import { createServer, type Server } from 'node:http';
import { getRequestListener } from '@hono/node-server';
import { Hono } from 'hono';
import type { Registry } from 'prom-client';
import { guardedAgents } from '@ukiyo/edge';
import {
  databaseCheck,
  diskCheck,
  drainServer,
  Health,
  liveBaseUrl,
  PUBLISHER_STALE_MS,
} from '@ukiyo/server';
import { liveAuth, mountLiveApi, type LiveEnv } from './api.ts';
import { LiveCore, type LiveTimings } from './core.ts';
import { mountHls } from './hls.ts';
import { PeerSignature } from './hls/peer-signature.ts';
import { hlsPlaybackTokens, PlaybackKeys } from './playback-tokens.ts';
import type { RtmpTimings } from './ingest/rtmp.ts';
import { LiveMetrics, ViewerTracker } from './metrics.ts';
import { createRtmpServers } from './rtmp.ts';
import { createSrtFront, type SrtFront, type SrtOptions } from './srt.ts';
import type { LiveDeps } from './types.ts';
import { LiveUsage } from './usage.ts';
import { Webhooks } from './webhooks.ts';
import { Archive } from './archive.ts';
import { mountSoraSignaling, type SoraTimings } from './sora.ts';
import { mountWhep } from './whep.ts';
import { mountWhip } from './whip.ts';
import { viewerProcessCount, ViewerProcesses } from './viewers/processes.ts';
import { HlsAdmission } from './viewers/hls-admission.ts';
import { handOffHls } from './viewers/hls-handoff.ts';
import { LoadGuard } from './viewers/load-guard.ts';

export type { LiveDeps } from './types.ts';

/** An idle kept-alive connection is closed after this long, by node:http and the viewer processes alike. */
const KEEP_ALIVE_MS = 5_000;

export interface LiveOptions {
  /** Default `{DATA_DIR}/live`. */
  dir: string;
  /** Base of reported URLs; default LIVE_PUBLIC_URL, else `http://localhost:{LIVE_PORT}`. */
  publicUrl: string;
  /** Usage written, claims refreshed and remote deletions carried out this often. */
  tickMs: number;
  usageFlushMs: number;
  staleClaimMs: number;
  timings: LiveTimings;
  rtmp: RtmpTimings;
  sora: SoraTimings;
  srt: SrtOptions;
  webhookTimeoutMs: number;
  /** Webhook deliveries and archive uploads this process works at once. */
  webhookConcurrency: number;
  archiveConcurrency: number;
  /** Where peer live processes reach this one; default LIVE_INTERNAL_URL. */
  internalUrl: string | undefined;
  /** A client that fetched a playlist this recently counts as a viewer. */
  viewerWindowMs: number;
  /** A viewer process's load, which admits and sheds WebRTC viewers, is read over windows this long. */
  loadWindowMs: number;
  /**
   * The main thread's load, which admits and sheds HLS clients, is read over windows this long:
   * shorter, since an HLS client's load shows within a part (no handshakes). 3 s windows let a
   * crowd in too slowly: 532 of 1,000 clients admitted within the bench's 10 s, 262 kept up,
   * against 616 to 891 and 586 to 801 with 1 s.
   */
  hlsLoadWindowMs: number;
  /**
   * A new HLS client's request waits this long for room before it is refused (503): a few of the
   * windows above, and less than a peer waits for the process it passes a request on to.
   */
  hlsAdmissionWaitMs: number;
}

export interface Live {
  /** WHIP ingest, HLS output and the live API; not yet listening. */
  server: Server;
  /** RTMP ingest (LIVE_RTMP_PORT); not yet listening. */
  rtmp: NetServer;
  /** RTMPS ingest (LIVE_RTMPS_PORT) when configured; not yet listening. */
  rtmps: TlsServer | undefined;
  /** SRT ingest (LIVE_SRT_PORT, UDP); not yet bound. */
  srt: SrtFront;
  /** Publisher sessions running in this process. */
  sessionCount(): number;
  /** This process's live metrics (merged into the process's /metrics by the entry point). */
  metrics: Registry;
  /** Readiness: the database (channels, tokens), room for HLS files, the viewer processes started. */
  health: Health;
  /** Writes pending usage now. */
  flushUsage(): Promise<void>;
  /** Runs the periodic claim refresh and remote deletions now. */
  tick(): Promise<void>;
  /**
   * Stops taking connections and lets those open finish what they asked (drainServer), node:http's
   * and the LL-HLS connections handed to the viewer processes alike, within `graceMs`.
   */
  drain(graceMs: number): Promise<void>;
  /** Ends every session (ffmpeg included), removes this process's HLS files, stops timers. */
  close(): Promise<void>;
}

const DEFAULTS: Omit<LiveOptions, 'dir' | 'publicUrl' | 'internalUrl'> = {
  tickMs: 2_000,
  usageFlushMs: 5_000,
  staleClaimMs: PUBLISHER_STALE_MS,
  timings: {
    watchMs: 100,
    pliStartMs: 500,
    pliSteadyMs: 10_000,
    mediaTimeoutMs: 10_000,
    iceGatheringTimeoutMs: 5_000,
  },
  rtmp: { publishTimeoutMs: 5_000, keyframeTimeoutMs: 10_000 },
  sora: { handshakeMs: 10_000, pingMs: 5_000 },
  srt: { handshakeTimeoutMs: 5_000, maxCallers: 200, maxCallersPerAddress: 16 },
  webhookTimeoutMs: 5_000,
  webhookConcurrency: 4,
  archiveConcurrency: 2,
  viewerWindowMs: 15_000,
  loadWindowMs: 3_000,
  hlsLoadWindowMs: 1_000,
  hlsAdmissionWaitMs: 3_000,
};

export async function createLive(deps: LiveDeps, overrides: Partial<LiveOptions> = {}): Promise<Live> {
  const options: LiveOptions = {
    dir: join(deps.config.DATA_DIR, 'live'),
    publicUrl: liveBaseUrl(deps.config),
    internalUrl: deps.config.LIVE_INTERNAL_URL?.replace(/\/+$/, ''),
    ...DEFAULTS,
    ...overrides,
  };
  const log = deps.log.child({ app: 'live' });
  // Webhooks and archive buckets are customer URLs: never our own network (ALLOW_PRIVATE_ORIGINS
  // lifts this for development and tests, as for image origins).
  const agents = guardedAgents(deps.config.ALLOW_PRIVATE_ORIGINS);
  const usage = new LiveUsage(deps.db, log);
  const webhooks = new Webhooks(
    { agents, allowPrivate: deps.config.ALLOW_PRIVATE_ORIGINS, timeoutMs: options.webhookTimeoutMs },
    deps,
    log,
  );
  const archive = new Archive(deps, webhooks, agents, deps.config.ALLOW_PRIVATE_ORIGINS);
  // Every live process works the queues, whichever process queued the job.
  const stopWorking = [
    await webhooks.work(options.webhookConcurrency),
    await archive.work(options.archiveConcurrency),
  ];
  const viewers = new ViewerTracker(options.viewerWindowMs);
  const metrics = new LiveMetrics({
    // Read at scrape time, when `core` below exists.
    publishers: (): number => core.sessionCount,
    viewers: () => viewers.count(),
    webRtcViewers: (): number => core.viewerCount,
    eventLoopUtilization: () => viewerProcesses.load,
    hlsClientsWaiting: () => hlsAdmission.waitingCount + viewerProcesses.hlsWaiting,
    hlsRequestsHeld: () => hls.held + viewerProcesses.hlsHeld,
    askForReports: () => viewerProcesses.reportHls(),
  });
  // The main thread answers the HLS the viewer processes do not (hls.ts): its own load admits its clients.
  const hlsAdmission = new HlsAdmission(
    new LoadGuard(deps.config.LIVE_MAX_EVENT_LOOP_UTILIZATION, options.hlsLoadWindowMs),
    options.viewerWindowMs,
    options.hlsAdmissionWaitMs,
    (shed) => {
      metrics.hlsShed.inc(shed);
      log.warn({ shed }, 'the thread answering HLS stays saturated: shedding its newest clients');
    },
  );
  const ice = {
    additionalHostAddresses: deps.config.LIVE_ICE_ADDRESSES,
    ...(deps.config.LIVE_ICE_PORT_RANGE ? { portRange: deps.config.LIVE_ICE_PORT_RANGE } : {}),
  };
  const viewerProcesses = new ViewerProcesses(
    {
      processes: viewerProcessCount(deps.config, log),
      maxLoad: deps.config.LIVE_MAX_EVENT_LOOP_UTILIZATION,
      loadWindowMs: options.loadWindowMs,
      settings: {
        ice,
        iceGatheringTimeoutMs: options.timings.iceGatheringTimeoutMs,
        // Each process admits its LL-HLS clients as the main thread does its own.
        hls: {
          maxLoad: deps.config.LIVE_MAX_EVENT_LOOP_UTILIZATION,
          loadWindowMs: options.hlsLoadWindowMs,
          quietMs: options.viewerWindowMs,
          admissionWaitMs: options.hlsAdmissionWaitMs,
          trustProxy: deps.config.TRUST_PROXY,
          keepAliveMs: KEEP_ALIVE_MS,
        },
      },
    },
    log,
    (shed) => {
      metrics.viewersShed.inc(shed);
      log.warn({ shed }, 'a viewer process stays saturated: shedding its newest WebRTC viewers');
    },
  );
  const core = new LiveCore(deps, log, usage, metrics, webhooks, archive, agents, {
    dir: options.dir,
    publicUrl: options.publicUrl,
    timings: options.timings,
    ice,
    staleClaimMs: options.staleClaimMs,
    ...(options.internalUrl ? { internalUrl: options.internalUrl } : {}),
    viewerProcesses,
  });

  const app = new Hono<LiveEnv>();
  app.post('/whip/*', async (c, next) => {
    await next();
    metrics.whip.inc({ status: String(c.res.status) });
  });
  mountWhip(app, liveAuth(deps, 'whip'), core);
  mountWhep(app, core);
  const playbackKeys = new PlaybackKeys(deps.db, deps.secrets);
  const peerSignature = new PeerSignature(deps.secrets.deriveKey('live-peer'));
  app.use('/hls/*', hlsPlaybackTokens(playbackKeys, peerSignature));
  const hls = mountHls(app, {
    core,
    usage,
    metrics,
    viewers,
    admission: hlsAdmission,
    playbackKeys,
    peerSignature,
    config: deps.config,
    log,
  });
  mountLiveApi(app, deps, liveAuth(deps, 'live'), core);
  app.onError((error, c) => {
    log.error({ err: error }, 'live request failed');
    return c.json({ ok: false, error: 'internal error' }, 500);
  });
  const honoListener = getRequestListener(app.fetch);
  const server = createServer({ keepAliveTimeout: KEEP_ALIVE_MS }, (request, response) => {
    if (!hls.fastPath(request, response)) void honoListener(request, response);
  });
  handOffHls(server, viewerProcesses, {
    trustProxy: deps.config.TRUST_PROXY,
    served: hls.countServed,
    handedOff: () => metrics.hlsHandedOff.inc(),
  });
  const rtmp = createRtmpServers(deps, core, options.rtmp, log);
  const signaling = mountSoraSignaling(server, deps, core, log, options.sora);
  const srt = createSrtFront(deps, core, options.srt, log);

  usage.start(options.usageFlushMs);
  let ticking: Promise<void> = Promise.resolve();
  const tick = () => {
    ticking = ticking
      .then(() => core.tick())
      .catch((error: unknown) => log.warn({ err: error }, 'live tick failed'));
    return ticking;
  };
  const ticker = setInterval(() => void tick(), options.tickMs);
  ticker.unref();

  return {
    server,
    rtmp: rtmp.rtmp,
    rtmps: rtmp.rtmps,
    srt,
    sessionCount: () => core.sessionCount,
    metrics: metrics.registry,
    health: new Health({
      database: databaseCheck(deps.db),
      files: diskCheck(options.dir, deps.config.READY_MIN_FREE_MB * 1024 ** 2),
      // Starting, the process serves HLS on its main thread and WebRTC viewers wait: degraded.
      viewerProcesses: { critical: false, run: () => viewerProcesses.started() },
    }),
    async flushUsage() {
      await viewerProcesses.reportHls();
      await usage.flush();
    },
    tick,
    async drain(graceMs) {
      await Promise.all([drainServer(server, graceMs), viewerProcesses.drainHls(graceMs)]);
    },
    async close() {
      clearInterval(ticker);
      await ticking;
      await drainServer(server, 0);
      await rtmp.close();
      await core.close();
      // What they answered since their last report is counted before they go.
      await viewerProcesses.reportHls();
      await viewerProcesses.close();
      hlsAdmission.close();
      await hls.close();
      // After the sessions: their SRT callers are told through the front's socket.
      await srt.close();
      for (const client of signaling.clients) client.terminate();
      signaling.close();
      // Jobs in hand finish; queued ones wait for the next process that works them.
      for (const stop of stopWorking) await stop();
      await usage.stop();
      agents.http.destroy();
      agents.https.destroy();
    },
  };
}
