import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { SoraClientMessage, SoraConnectMessage } from '@ukiyo/contract';
import type { Logger } from 'pino';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import { addressOf, authorizePublisher } from '@ukiyo/server';
import type { LiveCore } from './core.ts';
import { PEER_HEADER } from './hls/peer-signature.ts';
import { PublishError } from './ingest/ingest.ts';
import type { Candidate, VideoCodec } from './ingest/webrtc.ts';
import type { LiveDeps } from './types.ts';

export interface SoraTimings {
  /** The connect message, then the answer, must come within this long. */
  handshakeMs: number;
  /** A ping this often; a client that misses two pongs is gone. */
  pingMs: number;
}

/**
 * WebSocket close codes (RFC 6455 leaves 4000-4999 to applications): the HTTP status of the
 * same refusal plus 4000, so that sora-js-sdk's error ("CloseEventCode:4403 ...") reads like
 * WHIP's answer. 1000 is a normal end (DeleteChannel, the client's disconnect).
 */
const closeCode = (status: number) => 4000 + status;

/** The Sora protocol's codec names for the codecs the ladder takes. */
const VIDEO_CODECS: Record<string, VideoCodec> = { H264: 'h264', VP8: 'vp8' };

/** At most this many trickled candidates per connection: more is a flood, not ICE. */
const MAX_CANDIDATES = 64;
/** A signaling message's largest size. */
const MAX_PAYLOAD = 128 * 1024;
/** Signaling a relay holds for the holder at most (`SoraConnection.relay`). */
const MAX_RELAY_BACKLOG = 1024 * 1024;

/**
 * Sora signaling for publishers (`role: sendonly`), on the WebSocket at `sora_url`
 * (`/signaling`), so that the Sora SDKs publish unchanged: connect (channel_id, metadata with
 * the bearer in `access_token`, audio/video codecs) → our offer (every candidate of ours in it)
 * → the client's answer and trickled candidates → `notify` connection.created once the ladder
 * runs; `ping`/`pong` keep it alive; `disconnect` or closing the socket ends the publisher, and
 * the end of the session (DeleteChannel, no media) closes the socket with 1000.
 * A sendonly publisher's media never changes, so no re-offer is ever sent; a `re-answer` is
 * accepted and ignored. Viewers (`role: recvonly`) take the same exchange, on the process that
 * holds the channel: another relays their signaling to it.
 */
export function mountSoraSignaling(
  server: Server,
  deps: LiveDeps,
  core: LiveCore,
  log: Logger,
  timings: SoraTimings,
): WebSocketServer {
  const sockets = new WebSocketServer({ noServer: true, maxPayload: MAX_PAYLOAD });
  server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (new URL(request.url ?? '/', 'http://live').pathname !== '/signaling') {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    sockets.handleUpgrade(request, socket, head, (ws) => {
      const address = addressOf(
        request.headers['x-forwarded-for']?.toString(),
        request.socket.remoteAddress,
        deps.config,
      );
      const relayed = request.headers[PEER_HEADER] !== undefined;
      new SoraConnection(ws, address, relayed, deps, core, log, timings).run();
    });
  });
  return sockets;
}

/** The peer a signaling connection negotiates: a publisher's ingest or a viewer. */
interface SoraPeer {
  addCandidate(candidate: Candidate): Promise<void>;
  offer(): Promise<{ sdp: string; mid: { video: string; audio?: string } }>;
  accept(answer: string): Promise<void>;
}

/** One signaling connection: its messages in order, and the publisher or viewer it starts. */
class SoraConnection {
  private readonly inbox: SoraClientMessage[] = [];
  private wake: (() => void) | undefined;
  private peer: SoraPeer | undefined;
  /** Ends the publisher or viewer when the socket closes. */
  private leave: (() => void) | undefined;
  private candidates = 0;
  private missedPongs = 0;
  private gone = false;

  constructor(
    private readonly ws: WebSocket,
    private readonly address: string,
    /** A peer live process relays this connection (`relay`): it is answered here or refused. */
    private readonly relayed: boolean,
    private readonly deps: LiveDeps,
    private readonly core: LiveCore,
    private readonly log: Logger,
    private readonly timings: SoraTimings,
  ) {}

  run(): void {
    const first = new Promise<RawData>((resolve) => this.ws.once('message', resolve));
    this.ws.on('close', () => {
      this.gone = true;
      this.wake?.();
      this.leave?.();
    });
    this.ws.on('error', () => {});
    void this.within(first, 'no connect message')
      .then((data) => this.start(data))
      .catch((error: unknown) => this.refuse(error));
  }

  private async start(data: RawData): Promise<void> {
    const connect = SoraConnectMessage.safeParse(parseJson(data));
    if (!connect.success) throw new PublishError(400, 'the first message must be a valid connect message');
    const { role } = connect.data;
    if (role === 'recvonly') return this.view(connect.data, data);
    if (role !== 'sendonly') {
      throw new PublishError(400, `role ${role} is not supported: publish with sendonly, view with recvonly`);
    }
    return this.publish(connect.data);
  }

  /**
   * Our offer, the client's answer: the same exchange for a publisher (we receive) and a viewer
   * (we send). `connectionId` is the client's id in the offer.
   */
  private async negotiate(peer: SoraPeer, channelId: string, connectionId: string): Promise<void> {
    this.peer = peer;
    const offer = await peer.offer();
    this.send({
      type: 'offer',
      sdp: offer.sdp,
      client_id: connectionId,
      connection_id: connectionId,
      channel_id: channelId,
      mid: offer.mid,
      simulcast: false,
      spotlight: false,
    });
    const answer = await this.within(this.next('answer'), 'no answer to the offer');
    if (answer.type === 'disconnect') throw new PublishError(400, 'the client left before answering');
    await peer.accept(answer.sdp);
  }

  /**
   * A viewer (`role: recvonly`): the publisher's media forwarded to it as to a WHEP viewer; a
   * channel needing playback tokens takes one as `metadata.access_token`. A channel another
   * live process holds is viewed there, through `relay`.
   */
  private async view(connect: SoraConnectMessage, raw: RawData): Promise<void> {
    const { channel_id: channelId, metadata } = connect;
    if (!this.relayed && !this.core.served(channelId)?.session) {
      const holder = await this.core.peerOf(channelId);
      if (holder) return this.relay(holder, raw);
    }
    this.ws.on('message', (message) => this.receive(message));
    const viewer = await this.core.watch(channelId, 'sora', metadata?.access_token, (negotiating) =>
      this.negotiate(negotiating, channelId, negotiating.id),
    );
    this.leave = () => void viewer.close();
    this.connected('recvonly', channelId, viewer.id);
    void viewer.ended.then((why) =>
      why === 'no-room'
        ? this.close(closeCode(503), 'this live server has no room for its WebRTC viewers now; HLS plays')
        : this.close(1000, 'viewer ended'),
    );
    await this.next('disconnect');
    await viewer.close();
  }

  /**
   * A viewer of a channel the live process at `holder` (its LIVE_INTERNAL_URL) holds, as WHEP's
   * POST is passed on: the signaling relayed both ways as it comes, from the connect message on,
   * to the holder's, whose offer names its own ICE candidates, so that the media goes to it
   * directly. The holder runs the exchange (pings, refusals, the end); its close code and reason
   * reach the client, and the client's end closes the holder's side.
   */
  private relay(holder: string, connect: RawData): Promise<void> {
    // The client left while the holder was looked up.
    if (this.gone) return Promise.resolve();
    const upstream = new WebSocket(`${holder.replace(/^http/, 'ws')}/signaling`, {
      headers: { [PEER_HEADER]: '1' },
      maxPayload: MAX_PAYLOAD,
      handshakeTimeout: this.timings.handshakeMs,
    });
    // What the client sent before the holder's socket opened, and what that socket has not yet
    // taken: a client's signaling is a few kilobytes, so past MAX_RELAY_BACKLOG it is a flood.
    const early: Array<{ message: RawData; binary: boolean }> = [{ message: connect, binary: false }];
    let earlyBytes = 0;
    this.ws.on('message', (message, binary) => {
      // A client being closed may go on sending until its close timeout: none of that is held.
      if (this.ws.readyState !== WebSocket.OPEN) return;
      if (upstream.readyState === WebSocket.OPEN) upstream.send(message, { binary });
      else {
        early.push({ message, binary });
        earlyBytes += rawBytes(message);
      }
      if (earlyBytes + upstream.bufferedAmount > MAX_RELAY_BACKLOG)
        this.close(closeCode(400), 'signaling sent faster than it can be passed on');
    });
    upstream.on('open', () => {
      for (const { message, binary } of early.splice(0)) upstream.send(message, { binary });
      earlyBytes = 0;
    });
    upstream.on('message', (message, binary) => {
      if (this.ws.readyState === WebSocket.OPEN) this.ws.send(message, { binary });
    });
    this.leave = () => upstream.close(1000);
    return new Promise((resolve) => {
      upstream.on('error', () => {});
      upstream.on('close', (code, reason) => {
        // 1005 and 1006 stand for no close frame (a connection lost or never made): not sent on.
        if (code !== 1005 && code !== 1006) this.close(code, reason.toString());
        else this.close(closeCode(502), 'the live process holding this channel did not answer');
        resolve();
      });
    });
  }

  private connected(role: 'sendonly' | 'recvonly', channelId: string, connectionId: string): void {
    this.send({
      type: 'notify',
      event_type: 'connection.created',
      role,
      channel_id: channelId,
      client_id: connectionId,
      connection_id: connectionId,
    });
    this.keepAlive();
  }

  private async publish(connect: SoraConnectMessage): Promise<void> {
    const { channel_id: channelId, metadata } = connect;
    const video = connect.video ?? true;
    if (video === false) throw new PublishError(400, 'a publisher must send video');
    const videoCodec = VIDEO_CODECS[(video === true ? undefined : video.codec_type) ?? 'H264'];
    if (!videoCodec) throw new PublishError(400, 'video codec_type must be H264 or VP8');
    const audio = connect.audio ?? true;
    if (audio !== true && audio !== false && (audio.codec_type ?? 'OPUS') !== 'OPUS') {
      throw new PublishError(400, 'audio codec_type must be OPUS');
    }
    const authorization = await authorizePublisher(
      this.deps,
      metadata?.access_token,
      channelId,
      this.address,
    );
    if (!authorization.principal) throw new PublishError(authorization.status, authorization.error);
    if (!authorization.principal.isLive) {
      throw new PublishError(403, 'live streaming is not available for this organization');
    }

    this.ws.on('message', (raw) => this.receive(raw));
    const ingest = this.core.webRtcIngest('sora');
    this.leave = () => ingest.leave('publisher left (signaling closed)');
    const { access_token: _bearer, ...webhookMetadata } = metadata ?? {};
    const { connectionId } = await this.core.publish(
      authorization.principal.organizationId,
      channelId,
      ingest,
      (connectionId) =>
        this.negotiate(
          {
            offer: () => ingest.offer({ audio: audio !== false, videoCodec }),
            accept: (answer) => ingest.accept(answer),
            addCandidate: (candidate) => ingest.addCandidate(candidate),
          },
          channelId,
          connectionId,
        ),
      metadata ? webhookMetadata : undefined,
    );
    this.connected('sendonly', channelId, connectionId);
    void ingest.ended.then(() => this.close(1000, 'publisher session ended'));
    await this.next('disconnect');
    ingest.leave('publisher left (Sora disconnect)');
  }

  /** Messages after connect: candidates and pongs are handled at once, the rest queued. */
  private receive(raw: RawData): void {
    const parsed = SoraClientMessage.safeParse(parseJson(raw));
    if (!parsed.success) return void this.close(closeCode(400), 'invalid signaling message');
    const message = parsed.data;
    if (message.type === 'pong') this.missedPongs = 0;
    else if (message.type === 'candidate') {
      if (++this.candidates > MAX_CANDIDATES) return void this.close(closeCode(400), 'too many candidates');
      void this.peer?.addCandidate({
        candidate: message.candidate,
        ...(message.sdpMid != null ? { sdpMid: message.sdpMid } : {}),
        ...(message.sdpMLineIndex != null ? { sdpMLineIndex: message.sdpMLineIndex } : {}),
      });
    } else if (message.type !== 're-answer' && message.type !== 'stats') {
      this.inbox.push(message);
      this.wake?.();
    }
  }

  /** The next queued message of this type (others are dropped), or the disconnect/close. */
  private async next<T extends 'answer' | 'disconnect'>(
    type: T,
  ): Promise<Extract<SoraClientMessage, { type: T | 'disconnect' }>> {
    for (;;) {
      const message = this.inbox.shift();
      if (message?.type === type || message?.type === 'disconnect') {
        return message as Extract<SoraClientMessage, { type: T | 'disconnect' }>;
      }
      if (message) continue;
      if (this.gone) return { type: 'disconnect' } as Extract<SoraClientMessage, { type: 'disconnect' }>;
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  private keepAlive(): void {
    const timer = setInterval(() => {
      if (this.gone) return clearInterval(timer);
      if (++this.missedPongs > 2) {
        clearInterval(timer);
        return void this.close(closeCode(408), 'no pong');
      }
      this.send({ type: 'ping', stats: false });
    }, this.timings.pingMs);
  }

  /** `promise`, or a refusal once the handshake's time is up. */
  private within<T>(promise: Promise<T>, what: string): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new PublishError(408, what)), this.timings.handshakeMs);
    });
    return Promise.race([promise, late]).finally(() => clearTimeout(timer));
  }

  private refuse(error: unknown): void {
    if (error instanceof PublishError) {
      this.close(closeCode(error.status), error.message);
      return;
    }
    this.log.error({ err: error }, 'Sora signaling failed');
    this.close(1011, 'internal error');
  }

  private send(message: Record<string, unknown>): void {
    if (this.ws.readyState === this.ws.OPEN) this.ws.send(JSON.stringify(message));
  }

  private close(code: number, reason: string): void {
    // A close frame's reason has 123 bytes at most.
    if (this.ws.readyState === this.ws.OPEN)
      this.ws.close(code, Buffer.from(reason).subarray(0, 123).toString());
  }
}

function rawBytes(data: RawData): number {
  return Array.isArray(data) ? data.reduce((sum, part) => sum + part.length, 0) : data.byteLength;
}

function parseJson(data: RawData): unknown {
  try {
    return JSON.parse(data.toString());
  } catch {
    return undefined;
  }
}
