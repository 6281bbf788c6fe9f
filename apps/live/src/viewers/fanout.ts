import { uint16Add, Vp8RtpPayload, type RtpPacket } from 'werift';
import { CaptureClock } from './capture-clock.ts';
import { ForwardedPacket, rtxPacket, viewerPacket, type OutgoingTrack } from './rtp-out.ts';

/**
 * A viewer losing more than this share of its video (as its receiver reports, or as it NACKs)
 * stops at once and resumes at a keyframe, of the next lower rung when there is one: forwarding
 * on would only give it undecodable pictures on a link that cannot take them.
 */
const MAX_FRACTION_LOST = 0.25;
/** Losing more than this, a viewer moves to the next lower rung at its next keyframe. */
const DOWN_FRACTION_LOST = 0.1;
/** A report of at most this loss is a clean one. */
const CLEAN_FRACTION_LOST = 0.02;
/**
 * How long a viewer's reports stay clean before it tries the next higher rung, at first; each
 * try that fails (a move down within UP_TRIAL_MS) doubles it, up to MAX_UP_AFTER_MS.
 */
const UP_AFTER_MS = 10_000;
const MAX_UP_AFTER_MS = 160_000;
const UP_TRIAL_MS = 10_000;
/** A viewer's stream has a sender report about this often (RFC 3550's least interval: 5 s). */
const REPORT_INTERVAL_MS = 1_000;
/** Whether the report is due is looked at every this many packets sent. */
const REPORT_CHECK_PACKETS = 16;
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
 * One viewer's sender of one track: its own sequence numbers, and for video the rung it is on.
 * The publisher's packet is serialised once for all viewers, and this viewer's copy stamped with
 * its stream; NACKs are answered here from the packets it sent, over RTX when negotiated. Video
 * starts at a keyframe (on joining, after a stop for loss, on another rung); the rungs' timestamps
 * share one clock (rtp-source.ts), so moving between them renumbers only (and below a VP8
 * publisher's stream gives the rungs' H.264 its own payload type).
 */
class ViewerSender {
  /** The rung whose packets it sends: undefined until its first keyframe. */
  private rung: number | undefined;
  /** The rung whose next keyframe it starts at (joining, or moving). */
  private nextRung: number | undefined;
  /** False while stopped for loss: nothing is sent until the next rung's keyframe. */
  private sending = false;
  /** Stopped, and a report since said it still loses more than MAX_FRACTION_LOST: no restart yet. */
  private congested = false;
  /** Since when its reports have been clean (undefined: the last one was not). */
  private cleanSince: number | undefined;
  private upAfterMs = UP_AFTER_MS;
  /** When it last moved up a rung (a move down soon after says the try failed). */
  private movedUpAt = -Infinity;
  /**
   * Packets sent, and asked for again by NACK, since the receiver's last report. A receiver asks
   * for a packet again every round trip until it comes: each is counted once.
   */
  private sentSinceReport = 0;
  private nackedSinceReport = 0;
  /** Added to the publisher's sequence numbers: a skip leaves no gap for the viewer to NACK. */
  private sequenceDelta = 0;
  private lastSequence: number | undefined;
  /** The packets sent lately, by the viewer's sequence number modulo HISTORY_SIZE. */
  private readonly sentPackets: (ForwardedPacket | undefined)[] = new Array(HISTORY_SIZE);
  private readonly sentSequences = new Int32Array(HISTORY_SIZE).fill(-1);
  /** Whether the packet kept in a slot was NACKed already. */
  private readonly nacked = new Uint8Array(HISTORY_SIZE);
  /** Whether the packet kept in a slot went in the lower rungs' own codec (OutgoingTrack.lower). */
  private readonly sentLower = new Uint8Array(HISTORY_SIZE);
  /** What its sender reports count: packets and payload octets sent (retransmissions aside). */
  private packetsSent = 0;
  private octetsSent = 0;
  private nextReportAt = 0;

  /**
   * `rungs`: the track's fanouts, largest first (one for audio, and for a publisher's own video).
   * `onPictureLoss`: the viewer's decoder asks for a keyframe (video).
   */
  constructor(
    private readonly out: OutgoingTrack,
    private readonly rungs: TrackFanout[],
    video: boolean,
    onPictureLoss: () => void,
  ) {
    out.feedback = {
      pictureLoss: onPictureLoss,
      nack: (lost) => this.resend(lost),
      fractionLost: (share) => {
        if (!video) return;
        // A receiver counts what NACKs recovered as received: the share it had to ask for again
        // tells of the link as well.
        const asked = this.sentSinceReport > 0 ? this.nackedSinceReport / this.sentSinceReport : 0;
        this.sentSinceReport = 0;
        this.nackedSinceReport = 0;
        this.reported(Math.max(share, asked));
      },
    };
  }

  /** Joins the first rung: audio at once, video at its keyframe (the one held, or asked for). */
  join(): void {
    this.moveTo(0);
  }

  /** Whether packets of `fanout` go to this viewer now. */
  sendsFrom(fanout: TrackFanout): boolean {
    return this.sending && this.rung !== undefined && this.rungs[this.rung] === fanout;
  }

  /** Whether it waits for a keyframe of `fanout` to start at. */
  startsAt(fanout: TrackFanout): boolean {
    return this.nextRung !== undefined && this.rungs[this.nextRung] === fanout && !this.congested;
  }

  /**
   * Starts on `fanout`'s packets from `first` (a keyframe's first packet) on: numbered right
   * after the last one sent, leaving the rung it was on.
   */
  startOn(fanout: TrackFanout, first?: ForwardedPacket): void {
    const rung = this.rungs.indexOf(fanout);
    if (this.rung !== undefined && this.rung !== rung) {
      if (rung < this.rung) this.movedUpAt = performance.now();
      this.rungs[this.rung]!.leave(this);
    }
    this.rung = rung;
    this.nextRung = undefined;
    this.sending = true;
    if (first && this.lastSequence !== undefined) {
      this.sequenceDelta = uint16Add(uint16Add(this.lastSequence, 1), -first.sequenceNumber);
    }
  }

  /** Waits for `rung`'s next keyframe (still sending the current rung unless stopped). */
  private moveTo(rung: number): void {
    if (this.nextRung !== undefined && this.nextRung !== this.rung) this.rungs[this.nextRung]!.leave(this);
    this.nextRung = rung;
    this.rungs[rung]!.enter(this);
  }

  /** The share of this stream lost since the last report: moves down or up a rung, or stops. */
  private reported(share: number): void {
    const current = this.rung;
    if (current === undefined) return;
    const now = performance.now();
    const heavy = share > MAX_FRACTION_LOST;
    // A viewer that stops is let start again at the next keyframe unless a later report is heavy.
    this.congested = heavy && !this.sending;
    this.cleanSince = share > CLEAN_FRACTION_LOST ? undefined : (this.cleanSince ?? now);
    const lower = Math.min(current + 1, this.rungs.length - 1);
    if (share > DOWN_FRACTION_LOST) {
      if (lower !== current && now - this.movedUpAt < UP_TRIAL_MS) {
        // The rung it moved up to is too much for its link: the next try waits longer.
        this.upAfterMs = Math.min(this.upAfterMs * 2, MAX_UP_AFTER_MS);
        this.movedUpAt = -Infinity;
      }
      // Stopped, it waits for a keyframe: the lower rung's, or its own on the lowest.
      if (heavy) this.sending = false;
      if ((heavy || lower !== current) && this.nextRung !== lower) this.moveTo(lower);
    } else if (
      this.cleanSince !== undefined &&
      now - Math.max(this.cleanSince, this.movedUpAt) >= this.upAfterMs &&
      this.nextRung === undefined &&
      current > 0
    ) {
      this.moveTo(current - 1);
    }
  }

  /** Sends the packet; nothing before the track is open (its DTLS handshake done). */
  send(packet: ForwardedPacket): void {
    if (!this.out.open) return;
    const sequence = uint16Add(packet.sequenceNumber, this.sequenceDelta);
    this.lastSequence = sequence;
    const slot = sequence % HISTORY_SIZE;
    this.sentPackets[slot] = packet;
    this.sentSequences[slot] = sequence;
    this.nacked[slot] = 0;
    const lower = this.rung! > 0 && this.out.lower !== undefined;
    this.sentLower[slot] = lower ? 1 : 0;
    this.sentSinceReport++;
    this.out.send(viewerPacket(packet, (lower ? this.out.lower! : this.out).stream, sequence));
    this.packetsSent++;
    this.octetsSent += packet.payloadEnd - packet.headerSize;
    if (this.packetsSent % REPORT_CHECK_PACKETS === 0) this.report();
  }

  /**
   * A sender report when one is due: the stream's RTP time now by the first rung's capture clock.
   * Every rung is on the first's timeline, so a lower rung's pictures, later from the ladder's
   * encode, are placed when they were captured, and the receiver delays the audio to match them.
   */
  private report(): void {
    const now = Date.now();
    if (now < this.nextReportAt) return;
    const rtpTimestamp = this.rungs[0]!.clock.timestampAt(now);
    if (rtpTimestamp === undefined) return;
    this.nextReportAt = now + REPORT_INTERVAL_MS;
    this.out.report({ at: now, rtpTimestamp, packets: this.packetsSent, octets: this.octetsSent });
  }

  /** The viewer's NACK: the lost packets still kept, again (in the RTX stream when negotiated). */
  private resend(lost: number[]): void {
    for (const sequence of lost) {
      const slot = sequence % HISTORY_SIZE;
      const packet = this.sentPackets[slot];
      if (!packet || this.sentSequences[slot] !== sequence) continue;
      const { stream, rtx } = this.sentLower[slot] ? this.out.lower! : this.out;
      if (!this.nacked[slot]) {
        this.nacked[slot] = 1;
        this.nackedSinceReport++;
      }
      this.out.send(
        rtx
          ? rtxPacket(packet, sequence, rtx, this.out.nextRtxSequence())
          : viewerPacket(packet, stream, sequence),
      );
    }
  }

  close(): void {
    this.out.feedback = undefined;
    for (const fanout of this.rungs) fanout.leave(this);
  }
}

/**
 * A viewer's track sent the packets of `rungs` (its fanouts, largest first): audio, a publisher's
 * own video (one rung), or the ladder's rungs. It starts on the first and moves down while its
 * receiver reports loss, up again after UP_AFTER_MS of clean reports. Returns its end.
 */
export function sendTo(out: OutgoingTrack, rungs: TrackFanout[]): () => void {
  const first = rungs[0]!;
  const viewer = new ViewerSender(out, rungs, first.video, () => first.requestKeyframe());
  viewer.join();
  return () => viewer.close();
}

/**
 * The RTP of one publisher's track (or one rung of the ladder) to its viewers (an SFU: no
 * decoding, no transcoding). The loop hands each packet to every viewer's sender and awaits none
 * of them, so a slow viewer costs only itself. Video viewers start at a keyframe: the packets of
 * the current access unit are held while it is one, so a viewer arriving mid-keyframe starts at
 * its first packet.
 */
export class TrackFanout {
  /** When the track's timestamps were captured, as its packets' arrivals place them. */
  readonly clock: CaptureClock;
  /** The viewers sent this fanout's packets, or waiting for its keyframe. */
  private readonly viewers = new Set<ViewerSender>();
  private unit: ForwardedPacket[] = [];
  private unitTimestamp: number | undefined;
  private unitIsKeyframe = false;

  /**
   * `clockRate`: the track's RTP clock; `keyframeStart` tells a video packet that begins a
   * keyframe (undefined: audio); `requestKeyframe` asks the publisher for one (rate-limited by the
   * caller); `onWatched` is told when the fanout gets its first viewer or loses its last.
   */
  constructor(
    clockRate: number,
    private readonly keyframeStart: ((payload: Buffer) => boolean) | undefined,
    readonly requestKeyframe: () => void,
    private readonly onWatched: (watched: boolean) => void = () => {},
  ) {
    this.clock = new CaptureClock(clockRate);
  }

  get video(): boolean {
    return this.keyframeStart !== undefined;
  }

  get watched(): boolean {
    return this.viewers.size > 0;
  }

  /** A viewer comes to wait for a keyframe here (video), or to be sent every packet (audio). */
  enter(viewer: ViewerSender): void {
    if (this.viewers.has(viewer)) return;
    this.viewers.add(viewer);
    if (this.viewers.size === 1) this.onWatched(true);
    if (!this.keyframeStart) viewer.startOn(this);
    else if (this.unitIsKeyframe && this.unit.length > 0) this.replayUnitTo(viewer);
    else this.requestKeyframe();
  }

  leave(viewer: ViewerSender): void {
    if (this.viewers.delete(viewer) && this.viewers.size === 0) this.onWatched(false);
  }

  /** One packet of the publisher's (`bytes`: as it was serialised, when known), to every viewer. */
  forward(packet: RtpPacket, bytes?: Buffer): void {
    this.clock.observe(packet.header.timestamp, Date.now());
    if (!this.keyframeStart && this.viewers.size === 0) return;
    const forwarded = new ForwardedPacket(packet, bytes);
    if (this.keyframeStart) this.track(forwarded, packet.payload);
    for (const viewer of this.viewers) if (viewer.sendsFrom(this)) viewer.send(forwarded);
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
      if (viewer.startsAt(this)) this.replayUnitTo(viewer, packet);
    }
  }

  /** Starts a waiting viewer at the held keyframe: its packets so far, except `current`. */
  private replayUnitTo(viewer: ViewerSender, current?: ForwardedPacket): void {
    viewer.startOn(this, this.unit[0]!);
    for (const held of this.unit) if (held !== current) viewer.send(held);
  }
}
