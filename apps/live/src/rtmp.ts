import { readFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer, type Server as TlsServer } from 'node:tls';
import type { Logger } from 'pino';
import { channelOfStreamKey, countBadCredential } from '@ukiyo/server';
import type { LiveCore } from './core.ts';
import { PublishError } from './ingest/ingest.ts';
import { RtmpIngest, type RtmpTimings } from './ingest/rtmp.ts';
import type { LiveDeps } from './types.ts';

/** Connections one address may hold at once (publishing or not). */
const CONNECTIONS_PER_ADDRESS = 8;

export interface RtmpServers {
  /** RTMP ingest on LIVE_RTMP_PORT; not yet listening. */
  rtmp: Server;
  /** RTMPS ingest (the same, in TLS) when LIVE_RTMPS_PORT is set; not yet listening. */
  rtmps: TlsServer | undefined;
  /** Stops listening and cuts every connection (a publisher's session ends with it). */
  close(): Promise<void>;
}

/**
 * The channel and organization a stream key publishes to. A bad key counts against its address
 * as a bad API token does (one budget for both), past which it is told so; a good one needs its
 * channel undeleted and the organization a live one.
 */
async function publisherOf(
  deps: LiveDeps,
  core: LiveCore,
  streamKey: string,
  address: string,
): Promise<{ organizationId: number; channelId: string }> {
  const channelId = channelOfStreamKey(deps.secrets, streamKey);
  if (!channelId) {
    const verdict = await countBadCredential(deps.limits, address);
    if (!verdict.allowed) throw new PublishError(429, 'too many bad stream keys from this address');
    throw new PublishError(401, 'invalid stream key');
  }
  return { organizationId: await core.ownerOf(channelId), channelId };
}

/**
 * RTMP and RTMPS ingest: `rtmp(s)://{live host}:{port}/{app}/{stream key}`. Both servers hand
 * their sockets to the same handling (RTMPS is RTMP inside TLS), each socket one RtmpIngest; a
 * publish command whose key names a channel goes through core.publish like a WHIP offer (auth
 * webhook with protocol "rtmp", the channel's claim).
 */
export function createRtmpServers(
  deps: LiveDeps,
  core: LiveCore,
  timings: RtmpTimings,
  log: Logger,
): RtmpServers {
  const sockets = new Set<Socket>();
  const perAddress = new Map<string, number>();
  const publish = async (ingest: RtmpIngest, streamKey: string, address: string) => {
    const { organizationId, channelId } = await publisherOf(deps, core, streamKey, address);
    const { connectionId } = await core.publish(organizationId, channelId, ingest, () => ingest.accept());
    log.info({ channelId, connectionId, address }, 'RTMP publisher accepted');
  };
  const accept = (socket: Socket) => {
    const address = socket.remoteAddress ?? '';
    const held = perAddress.get(address) ?? 0;
    if (held >= CONNECTIONS_PER_ADDRESS) {
      socket.destroy();
      return;
    }
    perAddress.set(address, held + 1);
    sockets.add(socket);
    socket.once('close', () => {
      sockets.delete(socket);
      const left = (perAddress.get(address) ?? 1) - 1;
      if (left > 0) perAddress.set(address, left);
      else perAddress.delete(address);
    });
    socket.setNoDelay(true);
    new RtmpIngest(socket, timings, (ingest, key) => publish(ingest, key, address), log);
  };
  const rtmp = createServer(accept);
  const { LIVE_RTMPS_PORT, LIVE_RTMPS_CERT_FILE, LIVE_RTMPS_KEY_FILE } = deps.config;
  const rtmps =
    LIVE_RTMPS_PORT !== undefined && LIVE_RTMPS_CERT_FILE && LIVE_RTMPS_KEY_FILE
      ? createTlsServer(
          {
            cert: readFileSync(LIVE_RTMPS_CERT_FILE),
            key: readFileSync(LIVE_RTMPS_KEY_FILE),
            // A TLS handshake that stalls holds no RtmpIngest yet: it gets the publish deadline.
            handshakeTimeout: timings.publishTimeoutMs,
          },
          accept,
        )
      : undefined;
  // A client that fails its TLS handshake is its own problem, not the server's.
  rtmps?.on('tlsClientError', () => {});
  const closeServer = (server: Server | undefined) =>
    new Promise<void>((resolve) => (server?.listening ? server.close(() => resolve()) : resolve()));
  return {
    rtmp,
    rtmps,
    async close() {
      const closed = Promise.all([closeServer(rtmp), closeServer(rtmps)]);
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}
