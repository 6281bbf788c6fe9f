import { randomBytes } from 'node:crypto';
import { createSocket, type Socket } from 'node:dgram';
import type { AddressInfo } from 'node:net';
import type { Rendition } from '@ukiyo/contract';
import type { Logger } from 'pino';
import { MediaStreamTrack, RTCRtpCodecParameters, RtpPacket } from 'werift';
import type { Ingest } from '../ingest/ingest.ts';
import type { PublishedMedia, WebRtcIngest } from '../ingest/webrtc.ts';
import { profileLevelId, RTP_PAYLOAD_TYPES, type LadderInput } from '../hls/ladder.ts';

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
 * The ladder's RTP for WebRTC viewers: loopback UDP sockets, bound to ports the kernel chose (so
 * no two sessions collide), which the ladder's ffmpeg sends each WebRTC rung's H.264 to (ladder.ts
 * `rtp`), and for a publisher that sends no RTP (RTMP, SRT) the first rung's audio as Opus. Their
 * packets are written to local werift tracks, so a `Broadcast` forwards them to viewers as it
 * forwards a WebRTC publisher's. ffmpeg cannot be asked for a keyframe: a viewer starts on a
 * rung at its next one, at most one segment (the ladder's GOP) later.
 */
export class LadderRtp {
  /** Each rung's video, largest first, on one timeline once `alignTo` placed it. */
  private readonly rungs: MediaStreamTrack[];
  /**
   * Where each rung's first packet goes on the rungs' common timeline. ffmpeg's RTP muxers start
   * each stream's timestamps at a random value; the rungs' first frames are one picture (one
   * filter graph feeds them, from the ladder's time 0), so each rung is moved from its first
   * packet onto this, and a viewer moving between rungs keeps its clock.
   */
  private timelineStart: number | undefined;
  private readonly codec: RTCRtpCodecParameters;
  private readonly audioTrack: MediaStreamTrack | undefined;

  private constructor(
    private readonly sockets: { rendition: number; socket: Socket; port: number }[],
    private readonly audio: { socket: Socket; port: number } | undefined,
    /**
     * The rungs' `profile-level-id`: the SDP of an RTMP or SRT publisher's viewers names it, and
     * a VP8 publisher's viewers are answered with an H.264 of that profile where they offer one.
     */
    profile: string,
  ) {
    this.codec = new RTCRtpCodecParameters({
      mimeType: 'video/H264',
      clockRate: 90_000,
      payloadType: RTP_PAYLOAD_TYPES.video,
      parameters: `level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=${profile}`,
    });
    this.rungs = sockets.map(({ socket }) => this.track(socket, 'video', this.codec));
    this.audioTrack =
      audio &&
      this.track(
        audio.socket,
        'audio',
        new RTCRtpCodecParameters({
          mimeType: 'audio/opus',
          clockRate: 48_000,
          channels: 2,
          payloadType: RTP_PAYLOAD_TYPES.audio,
        }),
      );
  }

  /**
   * `rungs`: the indexes of the rungs' renditions, largest first (ladder.ts webRtcRenditions or
   * baselineRenditions); `audio`: whether ffmpeg sends Opus audio too.
   */
  static async open(
    renditions: Rendition[],
    rungs: number[],
    audio: boolean,
    log: Logger,
  ): Promise<LadderRtp> {
    const sockets: { socket: Socket; port: number }[] = [];
    try {
      for (let i = 0; i < rungs.length + (audio ? 1 : 0); i++) sockets.push(await bound(log));
    } catch (error) {
      for (const { socket } of sockets) socket.close();
      throw error;
    }
    return new LadderRtp(
      rungs.map((rendition, i) => ({ rendition, ...sockets[i]! })),
      audio ? sockets.at(-1) : undefined,
      // One profile, so the first rung's level.
      profileLevelId(renditions[rungs[0]!]!),
    );
  }

  /** Where ffmpeg sends each rung's video and the audio (the ladder's `rtp`). */
  get outputs(): NonNullable<LadderInput['rtp']> {
    return {
      rungs: this.sockets.map(({ rendition, port }) => ({ rendition, videoPort: port })),
      ...(this.audio ? { audioPort: this.audio.port } : {}),
    };
  }

  /**
   * The rungs' timeline: each rung's first frame at `timestamp`, and its packets taken from
   * then on. A WebRTC publisher's viewers move between its own stream and the rungs, so theirs
   * is the publisher's, from the RTP timestamp of the ladder's time 0.
   */
  alignTo(timestamp: number): void {
    this.timelineStart = timestamp;
  }

  /**
   * The media viewers of a publisher that sends no RTP get (opened with audio): the rungs and
   * the audio, on a timeline of their own. Settles with the first rung's first video packet, as
   * a WebRTC publisher's media does.
   */
  media(ingest: Pick<Ingest, 'withAudio'>): Promise<PublishedMedia> {
    this.alignTo(randomBytes(4).readUInt32BE(0));
    const [video, ...lowerRungs] = this.rungs;
    const audio = this.audioTrack;
    return new Promise((resolve) => {
      video!.onReceiveRtp.once(() =>
        resolve({
          video: { track: video!, codec: this.codec },
          lowerRungs: { codec: this.codec, tracks: lowerRungs },
          // Known by now (ffmpeg runs); undefined (SRT: only ffmpeg knows) offers an audio track,
          // silent if the publisher sends none.
          audio: ingest.withAudio === false || !audio ? undefined : { track: audio, codec: audio.codec! },
          requestKeyframe: () => {},
        }),
      );
    });
  }

  /**
   * A WebRTC publisher's media for its viewers, with the rungs below its own stream, placed on
   * its RTP clock. They are H.264 in packetization mode 1 (FU-A): below an H.264 publisher's
   * stream in that mode they go in its payload type; below a VP8 one's, in H.264's, to viewers
   * that receive both (one m-section, two codecs); below H.264 in mode 0, none.
   */
  beneath(ingest: Pick<WebRtcIngest, 'media' | 'ladderStart'>): Promise<PublishedMedia> {
    void ingest.ladderStart.then((timestamp) => this.alignTo(timestamp));
    return ingest.media.then((media) => {
      const { mimeType, parameters = '' } = media.video.codec;
      const singleNal =
        mimeType.toLowerCase() === 'video/h264' && !/(^|;)packetization-mode=1(;|$)/.test(parameters);
      return singleNal ? media : { ...media, lowerRungs: { codec: this.codec, tracks: this.rungs } };
    });
  }

  /**
   * A local track fed with the socket's RTP of the codec's payload type (nothing else); video's
   * timestamps moved onto the rungs' common timeline (none taken before it is set).
   */
  private track(socket: Socket, kind: 'video' | 'audio', codec: RTCRtpCodecParameters): MediaStreamTrack {
    const track = new MediaStreamTrack({ kind, codec });
    let firstTimestamp: number | undefined;
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
        firstTimestamp ??= packet.header.timestamp;
        if (this.timelineStart === undefined) return;
        packet.header.timestamp = (packet.header.timestamp - firstTimestamp + this.timelineStart) >>> 0;
      }
      track.writeRtp(packet);
    });
    return track;
  }

  close(): void {
    for (const { socket } of [...this.sockets, ...(this.audio ? [this.audio] : [])]) socket.close();
  }
}
