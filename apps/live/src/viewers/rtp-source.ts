import { randomBytes } from 'node:crypto';
import { createSocket, type Socket } from 'node:dgram';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { MediaStreamTrack, RTCRtpCodecParameters, RtpPacket } from 'werift';
import type { Ingest } from '../ingest/ingest.ts';
import type { PublishedMedia } from '../ingest/webrtc.ts';
import { RTP_PAYLOAD_TYPES, type LadderInput } from '../hls/ladder.ts';

/** An RTP datagram of `payloadType`: version 2, more than the fixed header. */
function isRtp(datagram: Buffer, payloadType: number): boolean {
  return datagram.length > 12 && datagram[0]! >> 6 === 2 && (datagram[1]! & 0x7f) === payloadType;
}

/**
 * A keyframe comes from ffmpeg as one burst of packets (about 150 at 720p and 2.5 Mbit/s) while
 * the event loop may be busy forwarding: the kernel holds them meanwhile, up to this (capped by
 * net.core.rmem_max; Linux's default 208 KiB holds about 90 packets).
 */
const RECEIVE_BUFFER_BYTES = 4 * 1024 * 1024;

async function bound(log: Logger): Promise<{ socket: Socket; port: number }> {
  const socket = createSocket({ type: 'udp4', recvBufferSize: RECEIVE_BUFFER_BYTES });
  socket.on('error', (error) => log.warn({ err: error }, 'ladder RTP socket error'));
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(0, '127.0.0.1', () => {
      socket.off('error', reject);
      resolve();
    });
  });
  return { socket, port: (socket.address() as AddressInfo).port };
}

/**
 * The ladder's RTP for WebRTC viewers of a publisher that sends none (RTMP, SRT): loopback UDP
 * sockets, bound to ports the kernel chose (so no two sessions collide), which the ladder's
 * ffmpeg sends each WebRTC rung's H.264 and the first rung's Opus audio to (ladder.ts `rtp`).
 * Their packets are written to local werift tracks, so a `Broadcast` forwards them to viewers as
 * it forwards a WebRTC publisher's. ffmpeg cannot be asked for a keyframe: a viewer starts at
 * the next one, at most one segment (the ladder's GOP) later.
 */
export class LadderRtp {
  /** Settles with the first rung's first video packet, as a WebRTC publisher's media does. */
  readonly media: Promise<PublishedMedia>;
  /**
   * ffmpeg's RTP muxers start each stream's timestamps at a random value; every rung's are moved
   * onto this one, from its first packet, so that a viewer moving between rungs keeps its clock.
   * The rungs' first frames are one picture (one filter graph feeds them), so one start is right.
   */
  private readonly timelineStart = randomBytes(4).readUInt32BE(0);

  private constructor(
    private readonly rungs: { rendition: number; socket: Socket; port: number }[],
    private readonly audio: { socket: Socket; port: number },
    /** The rungs' `profile-level-id` (ladder.ts profileLevelId): one profile, the first's level. */
    profileLevelId: string,
    ingest: Pick<Ingest, 'withAudio'>,
  ) {
    const h264 = new RTCRtpCodecParameters({
      mimeType: 'video/H264',
      clockRate: 90_000,
      payloadType: RTP_PAYLOAD_TYPES.video,
      parameters: `level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=${profileLevelId}`,
    });
    const [video, ...lowerRungs] = rungs.map(({ socket }) => this.track(socket, 'video', h264));
    const audioTrack = this.track(
      audio.socket,
      'audio',
      new RTCRtpCodecParameters({
        mimeType: 'audio/opus',
        clockRate: 48_000,
        channels: 2,
        payloadType: RTP_PAYLOAD_TYPES.audio,
      }),
    );
    this.media = new Promise((resolve) => {
      video!.onReceiveRtp.once(() =>
        resolve({
          video: { track: video!, codec: h264 },
          lowerRungs,
          // Known by now (ffmpeg runs); undefined (SRT: only ffmpeg knows) offers an audio track,
          // silent if the publisher sends none.
          audio: ingest.withAudio === false ? undefined : { track: audioTrack, codec: audioTrack.codec! },
          requestKeyframe: () => {},
        }),
      );
    });
  }

  /** `renditions`: the rungs' renditions, largest first (ladder.ts webRtcRenditions). */
  static async open(
    renditions: number[],
    profileLevelId: string,
    ingest: Pick<Ingest, 'withAudio'>,
    log: Logger,
  ): Promise<LadderRtp> {
    const sockets: { socket: Socket; port: number }[] = [];
    try {
      for (let i = 0; i <= renditions.length; i++) sockets.push(await bound(log));
    } catch (error) {
      for (const { socket } of sockets) socket.close();
      throw error;
    }
    const audio = sockets.pop()!;
    return new LadderRtp(
      renditions.map((rendition, i) => ({ rendition, ...sockets[i]! })),
      audio,
      profileLevelId,
      ingest,
    );
  }

  /** Where ffmpeg sends each rung's video and the audio (the ladder's `rtp`). */
  get outputs(): NonNullable<LadderInput['rtp']> {
    return {
      rungs: this.rungs.map(({ rendition, port }) => ({ rendition, videoPort: port })),
      audioPort: this.audio.port,
    };
  }

  /**
   * A local track fed with the socket's RTP of the codec's payload type (nothing else); video's
   * timestamps moved onto the rungs' common timeline.
   */
  private track(socket: Socket, kind: 'video' | 'audio', codec: RTCRtpCodecParameters): MediaStreamTrack {
    const track = new MediaStreamTrack({ kind, codec });
    let timestampShift: number | undefined;
    socket.on('message', (datagram) => {
      if (!isRtp(datagram, codec.payloadType!)) return;
      let packet: RtpPacket;
      try {
        packet = RtpPacket.deSerialize(datagram);
      } catch {
        // A datagram werift cannot parse (the port is open to every local process) is dropped.
        return;
      }
      if (kind === 'video') {
        timestampShift ??= this.timelineStart - packet.header.timestamp;
        packet.header.timestamp = (packet.header.timestamp + timestampShift) >>> 0;
      }
      track.writeRtp(packet);
    });
    return track;
  }

  close(): void {
    for (const { socket } of [...this.rungs, this.audio]) socket.close();
  }
}
