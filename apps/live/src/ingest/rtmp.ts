// The declarations travel with this file: whatever type-checks it (the all-in-one server too)
// sees them.
// eslint-disable-next-line @typescript-eslint/triple-slash-reference -- an ambient file, not a module
/// <reference path="./node-media-server.d.ts" />
import type { Socket } from 'node:net';
import type { Writable } from 'node:stream';
import type AVPacket from 'node-media-server/src/core/avpacket.js';
import Flv from 'node-media-server/src/protocol/flv.js';
import Rtmp from 'node-media-server/src/protocol/rtmp.js';
import type { Logger } from 'pino';
import { PublishError, type Ingest, type IngestSink } from './ingest.ts';

export interface RtmpTimings {
  /** From the TCP (or TLS) connection to the publish command: handshake, connect, createStream. */
  publishTimeoutMs: number;
  /** From NetStream.Publish.Start to the publisher's first H.264 keyframe. */
  keyframeTimeoutMs: number;
}

/** Decides on a publish command (stream key check, channel claim); refuses by throwing. */
export type RtmpPublishHandler = (ingest: RtmpIngest, streamKey: string) => Promise<void>;

const AUDIO = 8;
const VIDEO = 9;
/** node-media-server's packet flags (FLV tag body parsed). */
const AAC_HEADER = 0;
const VIDEO_HEADER = 2;
const KEYFRAME = 3;

/**
 * Bounds on what one connection may make the parser allocate: RTMP message lengths go up to
 * 16 MiB and chunk stream ids up to 65599, each id keeping a buffer of its last message's size.
 * Encoders use a handful of ids; a keyframe of a 4K stream at a high rate stays under 4 MiB.
 */
const MAX_MESSAGE_BYTES = 8 * 1024 * 1024;
const MAX_CHUNK_STREAMS = 16;
/** Media held between the first keyframe and ffmpeg's start (normally a few frames). */
const MAX_PENDING_BYTES = 16 * 1024 * 1024;

/**
 * ffmpeg reads FLV that starts with the sequence headers and the first keyframe (see packet()):
 * with audio and video both announced, its probing ends once each has decoded a frame;
 * -fpsprobesize 0 skips the frame-rate guess (FLV carries none it trusts), and the limits keep
 * a video-only stream, whose probing ffmpeg cannot call complete, from waiting seconds.
 */
const FLV_INPUT = [
  '-fpsprobesize',
  '0',
  '-analyzeduration',
  '200000',
  '-probesize',
  '65536',
  '-f',
  'flv',
  '-i',
  'pipe:0',
];

/**
 * node-media-server's RTMP protocol handling for one connection, publishing only: the publish
 * command goes to the ingest before any answer (the library would accept it at once), play is
 * refused, and message buffers are bounded.
 */
class PublishOnlyRtmp extends Rtmp {
  constructor(private readonly ingest: RtmpIngest) {
    super();
  }

  protected override onPublish(message: { streamName: string }): void {
    this.streamName = String(message.streamName).split('?')[0] ?? '';
    this.streamId = this.parserPacket.header.stream_id;
    this.ingest.publishRequested(this.streamName);
  }

  protected override onPlay(): void {
    throw new PublishError(400, 'RTMP is for publishing; play the channel over HLS');
  }

  protected override packetAlloc(): void {
    if (this.parserPacket.header.length > MAX_MESSAGE_BYTES || this.inPackets.size > MAX_CHUNK_STREAMS)
      throw new PublishError(413, 'RTMP message or chunk stream over the limit');
    super.packetAlloc();
  }
}

/**
 * One RTMP (or RTMPS) connection, from its first byte: node-media-server parses the protocol,
 * the publish command is decided by `onPublish` (which runs core.publish with accept() as the
 * negotiation), and the published audio and video messages become FLV tags on ffmpeg's stdin.
 * The FLV starts at the first H.264 keyframe with the sequence headers before it, audio held
 * back until then, as WebRTC's WebM does: ffmpeg has nothing to wait on or guess from.
 */
export class RtmpIngest implements Ingest {
  readonly protocol = 'rtmp' as const;
  readonly ffmpegInput = FLV_INPUT;
  withAudio = false;
  private readonly rtmp = new PublishOnlyRtmp(this);
  private state: 'connecting' | 'deciding' | 'accepted' | 'closed' = 'connecting';
  private readonly publishTimer: NodeJS.Timeout;
  private videoHeader: Buffer | undefined;
  private audioHeader: Buffer | undefined;
  private audioSeen = false;
  /** FLV tags from the first keyframe on, until ffmpeg's stdin is there. */
  private pending: Buffer[] | undefined;
  private pendingBytes = 0;
  private keyframeArrived: (() => void) | undefined;
  private stdin: Writable | undefined;
  private sink: IngestSink | undefined;

  constructor(
    private readonly socket: Socket,
    private readonly timings: RtmpTimings,
    private readonly onPublish: RtmpPublishHandler,
    private readonly log: Logger,
  ) {
    this.rtmp.onOutputCallback = (buffer) => {
      if (!socket.destroyed) socket.write(buffer);
    };
    this.rtmp.onPacketCallback = (packet) => this.packet(packet);
    this.publishTimer = setTimeout(() => void this.close(), timings.publishTimeoutMs);
    socket.on('data', (data: Buffer) => {
      this.sink?.received(data.length);
      try {
        const error = this.rtmp.parserData(data);
        if (error) throw new PublishError(400, error);
      } catch (error) {
        this.log.info({ err: error, address: socket.remoteAddress }, 'RTMP connection refused');
        void this.close();
      }
    });
    // A reset publisher is a normal end; 'close' follows.
    socket.on('error', () => {});
    socket.on('close', () => {
      void this.close();
      this.sink?.ended('publisher left');
    });
  }

  /** The publish command: no more RTMP is read until it is decided (nor media accepted). */
  publishRequested(streamKey: string): void {
    if (this.state !== 'connecting') throw new PublishError(400, 'one publish per connection');
    this.state = 'deciding';
    clearTimeout(this.publishTimer);
    this.socket.pause();
    this.onPublish(this, streamKey).catch((error: unknown) => this.refuse(error));
  }

  /**
   * The negotiation core.publish runs once the channel is claimed: NetStream.Publish.Start,
   * then the publisher's sequence headers and first keyframe, so ffmpeg starts with withAudio
   * known and the first picture in hand.
   */
  async accept(): Promise<void> {
    if (this.state !== 'deciding') throw new PublishError(400, 'the publisher left');
    this.state = 'accepted';
    const keyframe = new Promise<void>((resolve) => (this.keyframeArrived = resolve));
    this.rtmp.respondPublish();
    this.socket.resume();
    let timer: NodeJS.Timeout | undefined;
    const seconds = this.timings.keyframeTimeoutMs / 1000;
    await Promise.race([
      keyframe,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new PublishError(408, `no H.264 keyframe within ${seconds} s of publishing`)),
          this.timings.keyframeTimeoutMs,
        );
      }),
    ]).finally(() => clearTimeout(timer));
    if (this.socket.destroyed) throw new PublishError(400, 'the publisher left');
  }

  /** Tells the publisher why (onStatus error), then closes the connection. */
  private refuse(error: unknown): void {
    const publishError = error instanceof PublishError ? error : undefined;
    if (!publishError) this.log.error({ err: error }, 'RTMP publish failed');
    const message = publishError?.message ?? 'internal error';
    this.log.info(
      { address: this.socket.remoteAddress, status: publishError?.status, message },
      'RTMP publish refused',
    );
    if (this.state !== 'closed') {
      this.rtmp.sendStatusMessage(this.rtmp.streamId, 'error', 'NetStream.Publish.Denied', message);
      this.socket.end();
    }
    void this.close();
  }

  private packet(packet: AVPacket): void {
    if (this.state !== 'accepted') return;
    const { codec_type: type, flags } = packet;
    if (type !== AUDIO && type !== VIDEO) return; // script data: the sequence headers say it all
    const tag = Flv.createMessage(packet);
    if (type === VIDEO && flags === VIDEO_HEADER) this.videoHeader = tag;
    else if (type === AUDIO && flags === AAC_HEADER) this.audioHeader = tag;
    else if (!this.pending) {
      // Before the first keyframe: video cannot be decoded, audio is held back with it.
      this.audioSeen ||= type === AUDIO;
      if (type !== VIDEO || flags !== KEYFRAME) return;
      this.withAudio = this.audioSeen || this.audioHeader !== undefined;
      this.pending = [this.videoHeader, this.withAudio ? this.audioHeader : undefined].filter(
        (header) => header !== undefined,
      );
      this.keyframeArrived?.();
    }
    // Headers sent again later (new encoder settings) go through in order.
    if (this.pending && (type === VIDEO || this.withAudio)) this.forward(tag);
  }

  private forward(tag: Buffer): void {
    if (this.stdin) {
      this.write(tag);
      return;
    }
    this.pending!.push(tag);
    this.pendingBytes += tag.length;
    if (this.pendingBytes > MAX_PENDING_BYTES) void this.close();
  }

  /** ffmpeg reading slower than the publisher sends: TCP pushes back on the publisher. */
  private write(buffer: Buffer): void {
    const stdin = this.stdin!;
    if (stdin.destroyed || stdin.write(buffer) || this.socket.isPaused()) return;
    this.socket.pause();
    stdin.once('drain', () => this.socket.resume());
  }

  start(stdin: Writable, sink: IngestSink): void {
    if (!this.pending) throw new Error('start() before accept()');
    this.stdin = stdin;
    this.sink = sink;
    // Gone between its first keyframe and now: its 'close' had no session to tell.
    if (this.socket.destroyed) {
      sink.ended('publisher left');
      return;
    }
    this.write(Flv.createHeader(this.withAudio, true));
    for (const tag of this.pending) this.write(tag);
    this.pending = [];
    sink.keyframe();
  }

  async close(): Promise<void> {
    if (this.state === 'closed') return;
    this.state = 'closed';
    clearTimeout(this.publishTimer);
    this.keyframeArrived?.();
    // A refusal's onStatus is flushed by end(); anything else is cut at once.
    if (this.socket.writableEnded) setTimeout(() => this.socket.destroy(), 1000).unref();
    else this.socket.destroy();
  }
}
