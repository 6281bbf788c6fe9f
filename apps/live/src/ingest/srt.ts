import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import type { Logger } from 'pino';
import type { Ingest, IngestSink } from './ingest.ts';
import {
  CONCLUSION,
  destinationOf,
  encodeHandshake,
  INDUCTION,
  inductionRequest,
  isData,
  isShutdown,
  parseHandshake,
  peerIpField,
  Reject,
  rejection,
  rejectionReason,
  shutdown,
  type Handshake,
} from './srt-packets.ts';

export interface SrtTimings {
  /** From the caller's conclusion to its connection through to ffmpeg (ffmpeg's start included). */
  handshakeTimeoutMs: number;
}

/** The caller's side of a relay: the SRT front's one socket, which knows the caller's address. */
export interface CallerLink {
  address: string;
  send(packet: Buffer): void;
  /** The SRT timestamp (µs) for packets the relay makes itself. */
  timestamp(): number;
  /** The relay has ended: the front forgets the caller. */
  released(): void;
}

const LOOPBACK = '127.0.0.1';
/** ffmpeg may not be listening yet when the relay first knocks: it knocks again this often. */
const INDUCTION_RETRY_MS = 50;
/**
 * SRT's own default receive latency. The larger of the caller's and the listener's wins, so a
 * caller on a lossy path asks for more with its own `latency`.
 */
const LATENCY_US = 120_000;

/** A free loopback UDP port for ffmpeg's listener (taken back at once: ffmpeg binds it next). */
async function freeUdpPort(): Promise<number> {
  const probe = createSocket('udp4');
  await new Promise<void>((resolve, reject) => {
    probe.once('error', reject);
    probe.bind(0, LOOPBACK, resolve);
  });
  const { port } = probe.address();
  await new Promise<void>((resolve) => probe.close(resolve));
  return port;
}

type RelayState = 'waiting' | 'inducing' | 'concluding' | 'connected' | 'closed';

/**
 * An SRT caller's media, relayed to the channel's ffmpeg, which reads it as an SRT listener on
 * a loopback port of its own (ffmpeg 5.1's libsrt takes one caller per listener and cannot
 * route by stream id, so the front answers the caller's induction and this relay connects it
 * through). start() makes the relay's own induction with ffmpeg, from a socket of its own, and
 * passes on the caller's conclusion with ffmpeg's cookie instead of the front's: the caller's
 * socket id, key material and latency go through unchanged, so ffmpeg decrypts the stream itself
 * and the two ends agree as if connected directly. From then on every datagram is passed both
 * ways unchanged (socket ids, sequence numbers and timestamps are end to end).
 */
export class SrtIngest implements Ingest {
  readonly protocol = 'srt';
  /** ffmpeg reads the caller's MPEG-TS itself: only it learns whether audio comes. */
  readonly withAudio = undefined;
  private socket: Socket | undefined;
  private ffmpegPort = 0;
  private state: RelayState = 'waiting';
  private ffmpegCookie: number | undefined;
  private ffmpegSocketId: number | undefined;
  private sink: IngestSink | undefined;
  private knocking: NodeJS.Timeout | undefined;
  private deadline: NodeJS.Timeout | undefined;
  private mediaSeen = false;

  constructor(
    private readonly caller: CallerLink,
    /** The caller's latest conclusion (retransmissions replace it). */
    private conclusion: Handshake,
    private readonly passphrase: string,
    private readonly timings: SrtTimings,
    private readonly log: Logger,
  ) {}

  /**
   * MPEG-TS from ffmpeg's own SRT listener, on the caller's passphrase (ffmpeg checks the key
   * material once more and decrypts). Probing ends as soon as every stream the PMT announces
   * has its parameters; the limits keep a stream whose audio is late from holding it longer.
   */
  get ffmpegInput(): string[] {
    const url =
      `srt://${LOOPBACK}:${this.ffmpegPort}?mode=listener&transtype=live` +
      `&passphrase=${encodeURIComponent(this.passphrase)}&latency=${LATENCY_US}`;
    return ['-analyzeduration', '500000', '-probesize', '500000', '-f', 'mpegts', '-i', url];
  }

  /** Opens the relay's socket and chooses ffmpeg's port (before ffmpeg starts). */
  async prepare(): Promise<void> {
    this.ffmpegPort = await freeUdpPort();
    const socket = createSocket('udp4');
    socket.on('message', (packet, from) => this.fromFfmpeg(packet, from));
    // A datagram that cannot be sent is lost as it could be on any path; SRT retransmits.
    socket.on('error', (error) => this.log.debug({ err: error }, 'SRT relay socket error'));
    await new Promise<void>((resolve) => socket.bind(0, LOOPBACK, resolve));
    this.socket = socket;
  }

  start(_stdin: unknown, sink: IngestSink): void {
    this.sink = sink;
    this.state = 'inducing';
    const knock = () => this.toFfmpeg(inductionRequest(this.conclusion, peerIpField(LOOPBACK)));
    knock();
    this.knocking = setInterval(knock, INDUCTION_RETRY_MS);
    this.deadline = setTimeout(
      () => sink.ended('the SRT handshake with ffmpeg did not complete'),
      this.timings.handshakeTimeoutMs,
    );
  }

  /** Every datagram from the caller's address. */
  fromCaller(packet: Buffer): void {
    if (destinationOf(packet) === 0) {
      const handshake = parseHandshake(packet);
      if (handshake?.type === CONCLUSION && handshake.socketId === this.conclusion.socketId) {
        // A retransmission: the caller missed the answer, or ffmpeg has not given one yet.
        this.conclusion = handshake;
        if (this.state === 'concluding' || this.state === 'connected') this.conclude();
      }
      return;
    }
    if (this.state !== 'connected') return;
    this.sink?.received(packet.length);
    this.toFfmpeg(packet);
    if (isShutdown(packet)) {
      this.sink?.ended('the publisher closed its SRT connection');
    } else if (!this.mediaSeen && isData(packet)) {
      // The relay cannot look into the encrypted MPEG-TS; an encoder starts its stream on a
      // keyframe, so its first media on the way to ffmpeg starts the on-air clock.
      this.mediaSeen = true;
      this.sink?.keyframe();
    }
  }

  private fromFfmpeg(packet: Buffer, from: RemoteInfo): void {
    if (from.port !== this.ffmpegPort || this.state === 'closed') return;
    const handshake = parseHandshake(packet);
    if (!handshake) {
      if (this.state === 'connected') this.caller.send(packet);
      return;
    }
    if (handshake.type === INDUCTION) {
      if (this.state !== 'inducing') return;
      clearInterval(this.knocking);
      this.ffmpegCookie = handshake.cookie;
      this.state = 'concluding';
      this.conclude();
      return;
    }
    // ffmpeg's answer to the conclusion (or to a retransmission of it) goes to the caller.
    this.caller.send(encodeHandshake({ ...handshake, peerIp: peerIpField(this.caller.address) }));
    const reason = rejectionReason(handshake);
    if (reason !== undefined) {
      this.sink?.ended(`ffmpeg refused the SRT caller (reason ${reason})`);
    } else if (handshake.type === CONCLUSION && this.state === 'concluding') {
      clearTimeout(this.deadline);
      this.ffmpegSocketId = handshake.socketId;
      this.state = 'connected';
    }
  }

  /** The caller's conclusion to ffmpeg, with ffmpeg's cookie and ffmpeg's address as the peer's. */
  private conclude(): void {
    this.toFfmpeg(
      encodeHandshake({ ...this.conclusion, cookie: this.ffmpegCookie ?? 0, peerIp: peerIpField(LOOPBACK) }),
    );
  }

  private toFfmpeg(packet: Buffer): void {
    this.socket?.send(packet, this.ffmpegPort, LOOPBACK);
  }

  /**
   * Ends the relay: a connected caller and ffmpeg each get SHUTDOWN (the caller stops at once,
   * ffmpeg's input ends and it finishes its playlists); a caller still connecting is refused.
   */
  async close(): Promise<void> {
    if (this.state === 'closed') return;
    const state = this.state;
    this.state = 'closed';
    clearInterval(this.knocking);
    clearTimeout(this.deadline);
    const socket = this.socket;
    if (state === 'connected') {
      this.caller.send(shutdown(this.conclusion.socketId, this.caller.timestamp()));
      const bye = shutdown(this.ffmpegSocketId!, this.caller.timestamp());
      // Node drops datagrams still queued when a socket closes (a SHUTDOWN just passed on from
      // the caller among them): the last one is sent first.
      await new Promise<void>((resolve) => socket!.send(bye, this.ffmpegPort, LOOPBACK, () => resolve()));
    } else if (state !== 'waiting') {
      // 'waiting': the front refuses the caller itself, with the reason of the refusal.
      this.caller.send(rejection(this.conclusion, Reject.close, this.caller.timestamp()));
    }
    if (socket) await new Promise<void>((resolve) => socket.close(() => resolve()));
    this.caller.released();
  }
}
