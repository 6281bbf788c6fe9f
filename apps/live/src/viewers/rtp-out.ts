import type { Track } from 'node-datachannel';
import {
  GenericNack,
  PictureLossIndication,
  RtcpPacketConverter,
  RtcpPayloadSpecificFeedback,
  RtcpRrPacket,
  RtcpSenderInfo,
  RtcpSourceDescriptionPacket,
  RtcpSrPacket,
  RtcpTransportLayerFeedback,
  SourceDescriptionChunk,
  SourceDescriptionItem,
  type RtpPacket,
} from 'werift';

/**
 * A publisher's RTP packet serialised once for all its viewers. Each viewer sends a copy with
 * its own SSRC, payload type and sequence number patched into the header.
 */
export class ForwardedPacket {
  readonly bytes: Buffer;
  readonly headerSize: number;
  /** Where the payload ends: the padding, if any, follows. */
  readonly payloadEnd: number;
  readonly sequenceNumber: number;
  readonly timestamp: number;

  constructor(packet: RtpPacket, bytes: Buffer = packet.serialize()) {
    this.bytes = bytes;
    this.headerSize = packet.header.serializeSize;
    this.payloadEnd = this.headerSize + packet.payload.length;
    this.sequenceNumber = packet.header.sequenceNumber;
    this.timestamp = packet.header.timestamp;
  }
}

/** One viewer's stream: the SSRC and payload type its receiver expects. */
export interface StreamIds {
  ssrc: number;
  payloadType: number;
}

/** A track's stream in one of its codecs, and its RTX stream when negotiated. */
export interface CodecStreams {
  stream: StreamIds;
  rtx: StreamIds | undefined;
}

/** Patches a viewer's stream and sequence number into the RTP header at the start of `bytes`. */
function stamp(bytes: Buffer, stream: StreamIds, sequenceNumber: number): Buffer {
  bytes[1] = (bytes[1]! & 0x80) | stream.payloadType;
  bytes.writeUInt16BE(sequenceNumber, 2);
  bytes.writeUInt32BE(stream.ssrc, 8);
  return bytes;
}

/**
 * Where a viewer's copy of a packet is made, one after another: sending copies it before it
 * returns (OutgoingTrack.send), so one buffer serves every viewer. A buffer of its own for each
 * viewer's copy (200 viewers of a 4 Mbit/s stream: 84,000 a second, each with memory outside the
 * heap) kept V8's collector on a tenth of a viewer process's CPU.
 */
let scratch = Buffer.allocUnsafe(2048);

function scratchOf(length: number): Buffer {
  if (scratch.length < length) scratch = Buffer.allocUnsafe(length);
  return scratch.subarray(0, length);
}

/**
 * The packet as one viewer's stream carries it: marker, timestamp, extensions and padding kept.
 * Valid until the next viewer's packet is made: send it at once.
 */
export function viewerPacket(packet: ForwardedPacket, stream: StreamIds, sequenceNumber: number): Buffer {
  const bytes = scratchOf(packet.bytes.length);
  packet.bytes.copy(bytes);
  return stamp(bytes, stream, sequenceNumber);
}

/**
 * The packet retransmitted over RTX (RFC 4588): its header in the RTX stream, then the viewer's
 * sequence number it was first sent with, then its payload (without padding). Valid, as
 * viewerPacket's, until the next viewer's packet is made.
 */
export function rtxPacket(
  packet: ForwardedPacket,
  sentSequence: number,
  rtx: StreamIds,
  rtxSequence: number,
): Buffer {
  const { headerSize, payloadEnd } = packet;
  const bytes = scratchOf(payloadEnd + 2);
  packet.bytes.copy(bytes, 0, 0, headerSize);
  bytes[0] = bytes[0]! & ~0x20;
  bytes.writeUInt16BE(sentSequence, headerSize);
  packet.bytes.copy(bytes, headerSize + 2, headerSize, payloadEnd);
  return stamp(bytes, rtx, rtxSequence);
}

/** An RTCP BYE (RFC 3550 6.6) saying the streams `ssrcs` end. */
export function rtcpBye(ssrcs: number[]): Buffer {
  const packet = Buffer.alloc(4 + 4 * ssrcs.length);
  packet[0] = 0x80 | ssrcs.length;
  packet[1] = 203;
  packet.writeUInt16BE(ssrcs.length, 2);
  for (const [i, ssrc] of ssrcs.entries()) packet.writeUInt32BE(ssrc, 4 + 4 * i);
  return packet;
}

/** Seconds from the NTP epoch (1900) to the Unix one. */
const NTP_UNIX_OFFSET = 2_208_988_800n;
/** The SDES item type of a CNAME (RFC 3550 6.5.1). */
const SDES_CNAME = 1;

/** A stream's sending figures, as a sender report gives them. */
export interface SenderReport {
  /** Wall clock (ms) of the report, and the stream's RTP timestamp then. */
  at: number;
  rtpTimestamp: number;
  packets: number;
  /** Payload octets sent. */
  octets: number;
}

/**
 * An RTCP sender report (RFC 3550 6.4.1) of the stream `ssrc`, with its CNAME (an SDES packet: a
 * compound packet carries one).
 */
export function senderReport(ssrc: number, cname: string, report: SenderReport): Buffer {
  const ms = BigInt(Math.round(report.at));
  const ntpTimestamp = ((ms / 1000n + NTP_UNIX_OFFSET) << 32n) | (((ms % 1000n) << 32n) / 1000n);
  const sr = new RtcpSrPacket({
    ssrc,
    senderInfo: new RtcpSenderInfo({
      ntpTimestamp,
      rtpTimestamp: report.rtpTimestamp,
      packetCount: report.packets >>> 0,
      octetCount: report.octets >>> 0,
    }),
  });
  const sdes = new RtcpSourceDescriptionPacket({
    chunks: [
      new SourceDescriptionChunk({
        source: ssrc,
        items: [new SourceDescriptionItem({ type: SDES_CNAME, text: cname })],
      }),
    ],
  });
  return Buffer.concat([sr.serialize(), sdes.serialize()]);
}

/** What a viewer's receiver reports of one of our streams (its RTCP). */
export interface StreamFeedback {
  /** Its decoder lost pictures and needs a keyframe (PLI, FIR). */
  pictureLoss(): void;
  /** These sequence numbers did not arrive (generic NACK). */
  nack(lost: number[]): void;
  /** The share of packets lost since its previous report, 0 to 1. */
  fractionLost(share: number): void;
}

/**
 * The feedback in a viewer's RTCP (a compound packet, which may speak of its other streams too)
 * about the stream `ssrc`. A packet that does not parse is dropped: the viewer's mistake costs it
 * that report only.
 */
export function readFeedback(rtcp: Buffer, ssrc: number, feedback: StreamFeedback): void {
  let packets;
  try {
    packets = RtcpPacketConverter.deSerialize(rtcp);
  } catch {
    return;
  }
  for (const packet of packets) {
    if (packet instanceof RtcpRrPacket) {
      const report = packet.reports.find((block) => block.ssrc === ssrc);
      if (report) feedback.fractionLost(report.fractionLost / 256);
    } else if (packet instanceof RtcpPayloadSpecificFeedback) {
      const request = packet.feedback;
      // A FIR (werift exports no class for it) names the streams it asks of in its entries.
      const asked =
        request instanceof PictureLossIndication
          ? request.mediaSsrc === ssrc
          : 'fir' in request && request.fir.some((entry) => entry.ssrc === ssrc);
      if (asked) feedback.pictureLoss();
    } else if (packet instanceof RtcpTransportLayerFeedback) {
      const nack = packet.feedback;
      if (nack instanceof GenericNack && nack.mediaSourceSsrc === ssrc) feedback.nack(nack.lost);
    }
  }
}

/**
 * One track of a viewer's peer connection that we send on (node-datachannel: libdatachannel
 * protects each packet with libsrtp and sends it to the ICE pair's socket, all within `send`),
 * with the viewer's feedback on it read as it comes. Its sender reports are ours (report()):
 * libdatachannel's reporter pairs the last timestamp sent with the time it was sent, which places
 * a lower rung's pictures, late from the ladder's encode, as if they were on time.
 */
export class OutgoingTrack {
  private rtxSequence = Math.floor(Math.random() * 0x10000);
  /** Told of the viewer's feedback; set by whoever forwards to this track. */
  feedback: StreamFeedback | undefined;

  readonly stream: StreamIds;
  readonly rtx: StreamIds | undefined;
  /** The streams of the rungs below the first, when they are sent in a codec of their own. */
  readonly lower: CodecStreams | undefined;

  /** `codecs`: the track's streams in its first codec, then in the lower rungs' own, if any. */
  constructor(
    private readonly track: Track,
    private readonly cname: string,
    codecs: CodecStreams[],
  ) {
    ({ stream: this.stream, rtx: this.rtx } = codecs[0]!);
    this.lower = codecs[1];
    const { stream } = this;
    track.onMessage((message) => {
      if (this.feedback) readFeedback(message, stream.ssrc, this.feedback);
    });
  }

  /** Whether packets can go out: the DTLS handshake done and the track not closed. */
  get open(): boolean {
    return this.track.isOpen();
  }

  /** The next RTX sequence number. */
  nextRtxSequence(): number {
    const sequence = this.rtxSequence;
    this.rtxSequence = (sequence + 1) & 0xffff;
    return sequence;
  }

  /**
   * Says this track's streams end (an RTCP BYE, RFC 3550 6.6), so that a receiver that reads it
   * (Firefox, aiortc) ends them at once. libdatachannel tears its DTLS transport down without the
   * close alert it means to send, and a receiver that reads neither finds out from ICE consent.
   */
  bye(): void {
    if (this.open) this.send(rtcpBye([this.stream.ssrc, ...(this.rtx ? [this.rtx.ssrc] : [])]));
  }

  /** A sender report of the track's stream. */
  report(report: SenderReport): void {
    this.send(senderReport(this.stream.ssrc, this.cname, report));
  }

  /**
   * Sends one RTP (or RTCP) packet of this track's streams, copied before this returns. A failure
   * (the connection closing under us) loses this viewer's packet only: the connection's end
   * removes the viewer.
   */
  send(packet: Buffer): void {
    try {
      this.track.sendMessageBinary(packet);
    } catch {
      // See above.
    }
  }
}
