import { uint16Add, Vp8RtpPayload, type RtpPacket } from 'werift';
import { ForwardedPacket, rtxPacket, viewerPacket, type OutgoingTrack } from './rtp-out.ts';

/**
 * A viewer whose receiver reports losing more than this share of its video skips to the next
 * keyframe: forwarding on would only give it undecodable pictures on a link that cannot take them.
 */
const MAX_FRACTION_LOST = 0.25;
/** An access unit longer than this (packets) is not held for late joiners. */
const MAX_UNIT_PACKETS = 1024;

/** The codecs forwarded to WebRTC viewers, as werift names them. */
export type ForwardedVideoCodec = 'h264' | 'vp8';

/**
 * Whether an H.264 RTP payload (RFC 6184) begins a keyframe: its sequence parameter set, alone
 * or first in a STAP-A. WebRTC encoders send SPS and PPS in-band before every IDR picture; an
 * IDR slice without them cannot start a viewer's decoder, so a viewer starts at the SPS.
 */
export function h264KeyframeStart(payload: Buffer): boolean {
  const type = payload[0]! & 0x1f;
  return type === 7 || (type === 24 && payload.length > 3 && (payload[3]! & 0x1f) === 7);
}

/** Whether a VP8 RTP payload (RFC 7741) is the first packet of a keyframe. */
export function vp8KeyframeStart(payload: Buffer): boolean {
  const vp8 = Vp8RtpPayload.deSerialize(payload);
  return vp8.payloadHeaderExist && vp8.isKeyframe;
}

/** The packets a viewer keeps for answering NACKs. */
const HISTORY_SIZE = 128;

/**
 * One viewer's sender of one track: its own sequence numbers and reported loss. The publisher's
 * packet is serialised once for all viewers, and this viewer's copy stamped with its stream;
 * NACKs are answered here from the packets it sent, over RTX when negotiated.
 */
class ViewerSender {
  /** Video only: nothing is forwarded until a keyframe (on joining, after congestion). */
  waiting: boolean;
  private fractionLost = 0;
  /** Added to the publisher's sequence numbers: a skip leaves no gap for the viewer to NACK. */
  private sequenceDelta = 0;
  private lastSequence: number | undefined;
  /** The packets sent lately, by the viewer's sequence number modulo HISTORY_SIZE. */
  private readonly sentPackets: (ForwardedPacket | undefined)[] = new Array(HISTORY_SIZE);
  private readonly sentSequences = new Int32Array(HISTORY_SIZE).fill(-1);

  /** `onPictureLoss`: the viewer's decoder asks for a keyframe (video). */
  constructor(
    private readonly out: OutgoingTrack,
    private readonly video: boolean,
    onPictureLoss: () => void,
  ) {
    this.waiting = video;
    out.feedback = {
      pictureLoss: onPictureLoss,
      nack: (lost) => this.resend(lost),
      fractionLost: (share) => (this.fractionLost = share),
    };
  }

  get congested(): boolean {
    return this.video && this.fractionLost > MAX_FRACTION_LOST;
  }

  /**
   * Congested: this packet is not sent, and video waits for the next keyframe. The loss reported
   * so far is forgotten: the receiver's next report tells whether it lasts.
   */
  skip(): void {
    this.waiting = this.video;
    this.fractionLost = 0;
  }

  /** Video resumes at this packet (a keyframe's first): numbered right after the last one sent. */
  resumeAt(packet: ForwardedPacket): void {
    this.waiting = false;
    if (this.lastSequence !== undefined) {
      this.sequenceDelta = uint16Add(uint16Add(this.lastSequence, 1), -packet.sequenceNumber);
    }
  }

  /** Sends the packet; nothing before the track is open (its DTLS handshake done). */
  send(packet: ForwardedPacket): void {
    if (!this.out.open) return;
    const sequence = uint16Add(packet.sequenceNumber, this.sequenceDelta);
    this.lastSequence = sequence;
    this.sentPackets[sequence % HISTORY_SIZE] = packet;
    this.sentSequences[sequence % HISTORY_SIZE] = sequence;
    this.out.send(viewerPacket(packet, this.out.stream, sequence));
  }

  /** The viewer's NACK: the lost packets still kept, again (in the RTX stream when negotiated). */
  private resend(lost: number[]): void {
    const { stream, rtx } = this.out;
    for (const sequence of lost) {
      const packet = this.sentPackets[sequence % HISTORY_SIZE];
      if (!packet || this.sentSequences[sequence % HISTORY_SIZE] !== sequence) continue;
      this.out.send(
        rtx
          ? rtxPacket(packet, sequence, rtx, this.out.nextRtxSequence())
          : viewerPacket(packet, stream, sequence),
      );
    }
  }

  close(): void {
    this.out.feedback = undefined;
  }
}

/**
 * The publisher's RTP of one track to every viewer (an SFU: no decoding, no transcoding). The
 * loop hands each packet to every viewer's sender and awaits none of them, so a slow viewer
 * costs only itself. Video viewers start at a keyframe: the packets of the current access unit
 * are held while it is one, so a viewer arriving mid-keyframe starts at its first packet.
 */
export class TrackFanout {
  private readonly viewers = new Set<ViewerSender>();
  private unit: ForwardedPacket[] = [];
  private unitTimestamp: number | undefined;
  private unitIsKeyframe = false;

  /**
   * `keyframeStart` tells a video packet that begins a keyframe (undefined: audio);
   * `requestKeyframe` asks the publisher for one (rate-limited by the caller).
   */
  constructor(
    private readonly keyframeStart: ((payload: Buffer) => boolean) | undefined,
    private readonly requestKeyframe: () => void,
  ) {}

  get size(): number {
    return this.viewers.size;
  }

  /** Adds a viewer's track; returns its removal. Video: it waits for a keyframe, asked for now. */
  add(track: OutgoingTrack): () => void {
    const viewer = new ViewerSender(track, this.keyframeStart !== undefined, this.requestKeyframe);
    this.viewers.add(viewer);
    if (this.keyframeStart) {
      if (this.unitIsKeyframe && this.unit.length > 0) this.replayUnitTo(viewer);
      else this.requestKeyframe();
    }
    return () => {
      viewer.close();
      this.viewers.delete(viewer);
    };
  }

  /** One packet of the publisher's (`bytes`: as it was serialised, when known), to every viewer. */
  forward(packet: RtpPacket, bytes?: Buffer): void {
    if (!this.keyframeStart && this.viewers.size === 0) return;
    const forwarded = new ForwardedPacket(packet, bytes);
    if (this.keyframeStart) this.track(forwarded, packet.payload);
    for (const viewer of this.viewers) {
      if (viewer.congested) viewer.skip();
      else if (!viewer.waiting) viewer.send(forwarded);
    }
  }

  /** Keeps the current access unit while it is a keyframe; starts the viewers waiting for one. */
  private track(packet: ForwardedPacket, payload: Buffer): void {
    if (packet.timestamp !== this.unitTimestamp) {
      this.unitTimestamp = packet.timestamp;
      this.unit = [];
      this.unitIsKeyframe = false;
    }
    if (this.unit.length < MAX_UNIT_PACKETS) this.unit.push(packet);
    if (this.unitIsKeyframe || !this.keyframeStart!(payload)) return;
    this.unitIsKeyframe = true;
    for (const viewer of this.viewers) {
      // The current packet goes with everyone's in forward().
      if (viewer.waiting && !viewer.congested) this.replayUnitTo(viewer, packet);
    }
  }

  /** Starts a waiting viewer at the held keyframe: its packets so far, except `current`. */
  private replayUnitTo(viewer: ViewerSender, current?: ForwardedPacket): void {
    viewer.resumeAt(this.unit[0]!);
    for (const held of this.unit) if (held !== current) viewer.send(held);
  }
}
