import { RtcpRrPacket, uint16Add, Vp8RtpPayload, type RtpPacket, type RTCRtpSender } from 'werift';

/**
 * A viewer whose sends still in flight (SRTP and the UDP socket not done with them) exceed
 * this, or whose receiver reports losing more than MAX_FRACTION_LOST, skips to the next keyframe:
 * forwarding on would only deepen its backlog and give it undecodable pictures.
 */
const MAX_IN_FLIGHT = 256;
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

/** One viewer's sender of one track: its own sequence numbers, backlog and reported loss. */
class ViewerSender {
  /** Video only: nothing is forwarded until a keyframe (on joining, after congestion). */
  waiting: boolean;
  private inFlight = 0;
  private fractionLost = 0;
  /** Added to the publisher's sequence numbers: a skip leaves no gap for the viewer to NACK. */
  private sequenceDelta = 0;
  private lastSequence: number | undefined;
  private readonly subscriptions: (() => void)[];

  /** `onPictureLoss`: the viewer's decoder asks for a keyframe (video). */
  constructor(
    private readonly sender: RTCRtpSender,
    private readonly video: boolean,
    onPictureLoss: () => void,
  ) {
    this.waiting = video;
    this.subscriptions = [
      sender.onRtcp.subscribe((packet) => {
        if (!(packet instanceof RtcpRrPacket)) return;
        const report = packet.reports.find((r) => r.ssrc === sender.ssrc);
        if (report) this.fractionLost = report.fractionLost / 256;
      }).unSubscribe,
      sender.onPictureLossIndication.subscribe(onPictureLoss).unSubscribe,
    ];
  }

  get congested(): boolean {
    return this.inFlight > MAX_IN_FLIGHT || (this.video && this.fractionLost > MAX_FRACTION_LOST);
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
  resumeAt(packet: RtpPacket): void {
    this.waiting = false;
    if (this.lastSequence !== undefined) {
      this.sequenceDelta = uint16Add(uint16Add(this.lastSequence, 1), -packet.header.sequenceNumber);
    }
  }

  /**
   * Hands the packet to werift's sender without waiting for it: werift rewrites SSRC and payload
   * type for this viewer, keeps it for NACKs (RTX when negotiated) and encrypts it.
   */
  send(packet: RtpPacket): void {
    const copy = packet.clone();
    copy.header.sequenceNumber = uint16Add(packet.header.sequenceNumber, this.sequenceDelta);
    this.lastSequence = copy.header.sequenceNumber;
    this.inFlight++;
    const done = () => void this.inFlight--;
    this.sender.sendRtp(copy).then(done, done);
  }

  close(): void {
    for (const unsubscribe of this.subscriptions) unsubscribe();
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
  private unit: RtpPacket[] = [];
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

  /** Adds a viewer's sender; returns its removal. Video: it waits for a keyframe, asked for now. */
  add(sender: RTCRtpSender): () => void {
    const viewer = new ViewerSender(sender, this.keyframeStart !== undefined, this.requestKeyframe);
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

  /** One packet of the publisher's, to every viewer. */
  forward(packet: RtpPacket): void {
    if (this.keyframeStart) this.track(packet);
    for (const viewer of this.viewers) {
      if (viewer.congested) viewer.skip();
      else if (!viewer.waiting) viewer.send(packet);
    }
  }

  /** Keeps the current access unit while it is a keyframe; starts the viewers waiting for one. */
  private track(packet: RtpPacket): void {
    if (packet.header.timestamp !== this.unitTimestamp) {
      this.unitTimestamp = packet.header.timestamp;
      this.unit = [];
      this.unitIsKeyframe = false;
    }
    if (this.unit.length < MAX_UNIT_PACKETS) this.unit.push(packet);
    if (this.unitIsKeyframe || !this.keyframeStart!(packet.payload)) return;
    this.unitIsKeyframe = true;
    for (const viewer of this.viewers) {
      // The current packet goes with everyone's in forward().
      if (viewer.waiting && !viewer.congested) this.replayUnitTo(viewer, packet);
    }
  }

  /** Starts a waiting viewer at the held keyframe: its packets so far, except `current`. */
  private replayUnitTo(viewer: ViewerSender, current?: RtpPacket): void {
    viewer.resumeAt(this.unit[0]!);
    for (const held of this.unit) if (held !== current) viewer.send(held);
  }
}
