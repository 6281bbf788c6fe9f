import { createHmac, randomBytes } from 'node:crypto';
import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import { isIPv6 } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import { channelStreamSecret, countBadCredential } from '@ukiyo/server';
import type { LiveCore } from './core.ts';
import { PublishError } from './ingest/ingest.ts';
import { SrtIngest, type SrtTimings } from './ingest/srt.ts';
import {
  channelOfStreamId,
  checkKeyMaterial,
  CONCLUSION,
  destinationOf,
  HEADER_BYTES,
  HS_EXT_HSREQ,
  HSV5,
  INDUCTION,
  inductionResponse,
  parseHandshake,
  Reject,
  rejection,
  rejectReasonOf,
  streamIdOf,
  type Handshake,
} from './ingest/srt-packets.ts';
import type { LiveDeps } from './types.ts';

export interface SrtOptions extends SrtTimings {
  /** Callers connecting or publishing at once, in all and from one IP address. */
  maxCallers: number;
  maxCallersPerAddress: number;
}

export interface SrtFront {
  /** Binds the SRT port (UDP); resolves with the port bound. */
  listen(port: number, host: string): Promise<number>;
  /** Refuses new callers, disconnects the remaining ones and unbinds. */
  close(): Promise<void>;
}

/** Refusals remembered for the retransmissions of the refused conclusion. */
const MAX_REMEMBERED_REFUSALS = 4096;

/** A caller refused before (or instead of) publishing, with its SRT rejection reason. */
class Refusal extends Error {
  constructor(readonly reason: number) {
    super(`SRT caller refused (reason ${reason})`);
  }
}

/** What an address's datagrams go to once it has sent a conclusion. */
interface Caller {
  fromCaller(packet: Buffer): void;
}

/**
 * SRT ingest on one UDP port (LIVE_SRT_PORT) for every channel. Encoders call it with the
 * channel in the stream id (`{channel_id}`, or `#!::r={channel_id},m=publish`) and the channel's
 * stream secret as passphrase. The front answers inductions statelessly (the SYN cookie is an
 * HMAC of the caller's address and the time), checks a conclusion's stream id and key material
 * itself (a wrong passphrase costs no ffmpeg and no claim), then publishes through core.publish
 * like WHIP (auth webhook with protocol "srt", the channel's claim) with an SrtIngest relaying
 * the caller to the session's ffmpeg. Datagrams from addresses that are neither handshaking nor
 * relayed are dropped.
 */
class SrtServer implements SrtFront {
  private socket: Socket | undefined;
  private readonly cookieKey = randomBytes(32);
  private readonly startedAt = performance.now();
  /** By `address|port`: callers being checked or relayed. */
  private readonly callers = new Map<string, Caller>();
  private readonly refusals = new Map<string, { socketId: number; packet: Buffer; until: number }>();
  private sweeper: NodeJS.Timeout | undefined;
  private closing = false;

  constructor(
    private readonly deps: LiveDeps,
    private readonly core: LiveCore,
    private readonly options: SrtOptions,
    private readonly log: Logger,
  ) {}

  async listen(port: number, host: string): Promise<number> {
    const socket = createSocket(isIPv6(host) ? 'udp6' : 'udp4');
    socket.on('message', (packet, from) => this.receive(packet, from));
    socket.on('error', (error) => this.log.warn({ err: error }, 'SRT socket error'));
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(port, host, () => {
        socket.off('error', reject);
        resolve();
      });
    });
    this.socket = socket;
    this.sweeper = setInterval(() => this.sweep(), this.options.handshakeTimeoutMs);
    this.sweeper.unref();
    return socket.address().port;
  }

  private timestamp(): number {
    return Math.round((performance.now() - this.startedAt) * 1000) % 2 ** 32;
  }

  private send(packet: Buffer, to: { address: string; port: number }): void {
    this.socket?.send(packet, to.port, to.address);
  }

  /** The SYN cookie of an address in a period of handshakeTimeoutMs. */
  private cookie(from: RemoteInfo, period: number): number {
    return createHmac('sha256', this.cookieKey)
      .update(`${from.address}|${from.port}|${period}`)
      .digest()
      .readUInt32BE(0);
  }

  private receive(packet: Buffer, from: RemoteInfo): void {
    const key = `${from.address}|${from.port}`;
    const caller = this.callers.get(key);
    if (caller) {
      caller.fromCaller(packet);
      return;
    }
    if (packet.length < HEADER_BYTES || destinationOf(packet) !== 0) return;
    const handshake = parseHandshake(packet);
    if (!handshake) return;
    const period = Math.floor(Date.now() / this.options.handshakeTimeoutMs);
    if (handshake.type === INDUCTION) {
      this.send(inductionResponse(handshake, this.cookie(from, period), this.timestamp()), from);
      return;
    }
    // Only a cookie of this period or the last proves the caller receives at its address.
    if (
      handshake.type !== CONCLUSION ||
      (handshake.cookie !== this.cookie(from, period) && handshake.cookie !== this.cookie(from, period - 1))
    ) {
      return;
    }
    const refused = this.refusals.get(key);
    if (refused && refused.socketId === handshake.socketId && refused.until > Date.now()) {
      this.send(refused.packet, from);
      return;
    }
    void this.admit(key, handshake, from);
  }

  /** A new caller's conclusion: checked, then published, else refused with its reason. */
  private async admit(key: string, handshake: Handshake, from: RemoteInfo): Promise<void> {
    const fromAddress = [...this.callers.keys()].filter((other) => other.startsWith(`${from.address}|`));
    let reason: number | undefined;
    if (this.closing) reason = Reject.close;
    // HSv4 callers send no stream id in the handshake.
    else if (handshake.version !== HSV5 || !(handshake.extension & HS_EXT_HSREQ)) reason = Reject.version;
    else if (
      this.callers.size >= this.options.maxCallers ||
      fromAddress.length >= this.options.maxCallersPerAddress
    ) {
      reason = Reject.overload;
    }
    if (reason !== undefined) {
      this.refuse(key, handshake, from, reason);
      return;
    }
    // Retransmissions while the caller is checked: the answer to the first covers them.
    const checking: Caller = { fromCaller: () => {} };
    this.callers.set(key, checking);
    let ingest: SrtIngest | undefined;
    try {
      const { organizationId, channelId, passphrase } = await this.publisher(handshake, from.address);
      if (this.closing) throw new Refusal(Reject.close);
      ingest = new SrtIngest(
        {
          address: from.address,
          send: (packet) => this.send(packet, from),
          timestamp: () => this.timestamp(),
          released: () => {
            if (this.callers.get(key) === ingest) this.callers.delete(key);
          },
        },
        handshake,
        passphrase,
        this.options,
        this.log,
      );
      this.callers.set(key, ingest);
      const { connectionId } = await this.core.publish(organizationId, channelId, ingest, () =>
        ingest!.prepare(),
      );
      this.log.info({ channelId, connectionId, address: from.address }, 'SRT publisher accepted');
    } catch (error) {
      const current = this.callers.get(key);
      if (current === checking || current === ingest) this.callers.delete(key);
      if (error instanceof Refusal) reason = error.reason;
      else if (error instanceof PublishError) reason = rejectReasonOf(error.status);
      else {
        this.log.error({ err: error }, 'SRT caller could not be published');
        reason = Reject.internal;
      }
      this.refuse(key, handshake, from, reason);
    }
  }

  /**
   * The channel, organization and passphrase of a caller. Its stream id and key material are
   * its credentials: a bad one counts against its address as a bad API token or stream key
   * does (one budget for all), past which it is told so.
   */
  private async publisher(
    handshake: Handshake,
    address: string,
  ): Promise<{ organizationId: number; channelId: string; passphrase: string }> {
    const badCredential = async (reason: number) => {
      const verdict = await countBadCredential(this.deps.limits, address);
      return new Refusal(verdict.allowed ? reason : Reject.overload);
    };
    const streamId = streamIdOf(handshake);
    const named = streamId === undefined ? { reject: Reject.badRequest } : channelOfStreamId(streamId);
    if ('reject' in named) throw await badCredential(named.reject);
    const { channelId } = named;
    const passphrase = channelStreamSecret(this.deps.secrets, channelId);
    const keys = await checkKeyMaterial(handshake, passphrase);
    if (keys !== 'matches') throw await badCredential(keys === 'absent' ? Reject.unsecure : Reject.badSecret);
    const organizationId = await this.core.ownerOf(channelId).catch((error: unknown) => {
      throw error instanceof PublishError ? new Refusal(rejectReasonOf(error.status)) : error;
    });
    return { organizationId, channelId, passphrase };
  }

  private refuse(key: string, handshake: Handshake, to: RemoteInfo, reason: number): void {
    const packet = rejection(handshake, reason, this.timestamp());
    if (this.refusals.size < MAX_REMEMBERED_REFUSALS) {
      this.refusals.set(key, {
        socketId: handshake.socketId,
        packet,
        until: Date.now() + this.options.handshakeTimeoutMs,
      });
    }
    this.log.info({ address: to.address, reason }, 'SRT caller refused');
    this.send(packet, to);
  }

  private sweep(): void {
    const now = Date.now();
    for (const [key, refusal] of this.refusals) if (refusal.until <= now) this.refusals.delete(key);
  }

  async close(): Promise<void> {
    this.closing = true;
    clearInterval(this.sweeper);
    const relays = [...this.callers.values()].filter((caller) => caller instanceof SrtIngest);
    await Promise.all(relays.map((relay) => relay.close()));
    const socket = this.socket;
    this.socket = undefined;
    if (socket) await new Promise<void>((resolve) => socket.close(() => resolve()));
  }
}

export function createSrtFront(deps: LiveDeps, core: LiveCore, options: SrtOptions, log: Logger): SrtFront {
  return new SrtServer(deps, core, options, log.child({ protocol: 'srt' }));
}
