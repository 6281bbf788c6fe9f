import type { Socket } from 'node:dgram';
import { ntpTime, type RTCRtpSender, type RtpHeader, type RtpPacket, type SrtpSession } from 'werift';

/**
 * A publisher's RTP packet serialised once for all its viewers. Each viewer sends a copy of the
 * header with its own SSRC, payload type and sequence number before the same payload bytes:
 * werift's RTCRtpSender.sendRtp would clone, re-stamp and re-serialise the packet per viewer.
 */
export class ForwardedPacket {
  readonly bytes: Buffer;
  readonly headerSize: number;
  /** Where the payload ends: the padding, if any, follows. */
  readonly payloadEnd: number;
  readonly sequenceNumber: number;
  readonly timestamp: number;
  /** Its arrival, the NTP time our sender reports pair with its RTP timestamp. */
  readonly ntpTimestamp: bigint;

  constructor(packet: RtpPacket, bytes: Buffer = packet.serialize()) {
    this.bytes = bytes;
    this.headerSize = packet.header.serializeSize;
    this.payloadEnd = this.headerSize + packet.payload.length;
    this.sequenceNumber = packet.header.sequenceNumber;
    this.timestamp = packet.header.timestamp;
    this.ntpTimestamp = ntpTime();
  }
}

/** One viewer's stream: the SSRC and payload type its receiver expects. */
export interface StreamIds {
  ssrc: number;
  payloadType: number;
}

/** A copy of the packet's header for one viewer's stream (marker, timestamp and the rest kept). */
export function viewerHeader(packet: ForwardedPacket, stream: StreamIds, sequenceNumber: number): Buffer {
  const header = Buffer.from(packet.bytes.subarray(0, packet.headerSize));
  header[1] = (header[1]! & 0x80) | stream.payloadType;
  header.writeUInt16BE(sequenceNumber, 2);
  header.writeUInt32BE(stream.ssrc, 8);
  return header;
}

/**
 * The packet retransmitted over RTX (RFC 4588), as werift's wrapRtx makes it: the viewer's
 * sequence number it was sent with, then its payload (without padding), in the RTX stream.
 */
export function rtxPacket(
  packet: ForwardedPacket,
  sentSequence: number,
  rtx: StreamIds,
  rtxSequence: number,
): { header: Buffer; payload: Buffer } {
  const header = viewerHeader(packet, rtx, rtxSequence);
  header[0] = header[0]! & ~0x20;
  const payload = Buffer.allocUnsafe(2 + packet.payloadEnd - packet.headerSize);
  payload.writeUInt16BE(sentSequence, 0);
  packet.bytes.copy(payload, 2, packet.headerSize, packet.payloadEnd);
  return { header, payload };
}

/**
 * What werift's SRTP ciphers read of an RtpHeader: its bytes, sequence number and SSRC. Handing
 * them the bytes already made spares a header object and its serialisation per viewer.
 */
class SerialisedHeader {
  constructor(
    private readonly bytes: Buffer,
    readonly sequenceNumber: number,
    readonly ssrc: number,
  ) {}

  get serializeSize(): number {
    return this.bytes.length;
  }

  serialize(): Buffer {
    return this.bytes;
  }
}

/**
 * The packet (header and payload bytes) protected by the SRTP session, whose rollover counter
 * for `ssrc` it advances: the sender's DTLS transport's session, as werift's sendRtp uses it.
 */
export function protect(session: SrtpSession, header: Buffer, payload: Buffer, ssrc: number): Buffer {
  return session.encrypt(
    payload,
    new SerialisedHeader(header, header.readUInt16BE(2), ssrc) as unknown as RtpHeader,
  );
}

/** The private fields of werift's RTCRtpSender this module keeps as its sendRtp would. */
interface SenderInternals {
  rtxPayloadType?: number;
  ntpTimestamp: bigint;
  rtpTimestamp: number;
  packetCount: number;
  octetCount: number;
}

/** werift's UdpTransport, as the pairs of host and server-reflexive candidates have it. */
interface UdpTransportInternals {
  type?: string;
  socket?: Socket;
  closed?: boolean;
}

/** The socket of a pair's plain UDP transport; undefined for others (TURN, TCP). */
function udpSocket(transport: UdpTransportInternals | undefined): Socket | undefined {
  return transport?.type === 'udp' ? transport.socket : undefined;
}

/** The private parts of werift's ICE connection and its candidate pairs this module uses. */
interface IceInternals {
  canSendApplicationData(): boolean;
  nominated?: {
    remoteAddr: [string, number];
    packetsSent: number;
    bytesSent: number;
    protocol: {
      sendData(data: Buffer, addr: [string, number]): Promise<void>;
      transport?: UdpTransportInternals;
    };
  };
}

/**
 * A viewer's werift sender, sent through below its sendRtp: SRTP by the DTLS transport's own
 * session (so its rollover counters stay werift's), then straight to the UDP socket of the ICE
 * connection's selected pair, as werift's ICE connection would send it (consent checked, its
 * counters kept) without the chain of promises it makes per packet. Kept as sendRtp keeps them:
 * the sender report's figures, and the reports running.
 */
export class SrtpOut {
  private readonly internals: SenderInternals;
  private rtxSequence = Math.floor(Math.random() * 0x10000);
  private reporting = false;
  /** Sends through a pair that is not plain UDP (TURN, TCP) not yet settled. */
  private pending = 0;
  private readonly settled = () => void this.pending--;

  constructor(private readonly sender: RTCRtpSender) {
    this.internals = sender as unknown as SenderInternals;
  }

  /** The viewer's stream; undefined until the DTLS handshake is done and a codec agreed. */
  get stream(): StreamIds | undefined {
    const codec = this.sender.codec;
    if (this.sender.dtlsTransport.state !== 'connected' || !codec) return undefined;
    return { ssrc: this.sender.ssrc, payloadType: codec.payloadType };
  }

  /** The RTX stream, when negotiated. */
  get rtx(): StreamIds | undefined {
    const payloadType = this.internals.rtxPayloadType;
    return payloadType === undefined ? undefined : { ssrc: this.sender.rtxSsrc, payloadType };
  }

  /** The next RTX sequence number. */
  nextRtxSequence(): number {
    const sequence = this.rtxSequence;
    this.rtxSequence = (sequence + 1) & 0xffff;
    return sequence;
  }

  /**
   * Encrypts and sends one packet, unless the ICE connection may not send (no consent). A
   * failure (a transport closing under us) loses this viewer's packet only, as in werift.
   */
  send(header: Buffer, payload: Buffer, ssrc: number): void {
    const dtls = this.sender.dtlsTransport;
    const connection = dtls.iceTransport.connection as unknown as IceInternals;
    const pair = connection.nominated;
    if (!pair || !connection.canSendApplicationData()) return;
    const transport = pair.protocol.transport;
    const socket = udpSocket(transport);
    if (socket && transport!.closed) return;
    try {
      const data = protect(dtls.srtp, header, payload, ssrc);
      if (socket) {
        socket.send(data, pair.remoteAddr[1], pair.remoteAddr[0]);
      } else {
        this.pending++;
        pair.protocol.sendData(data, pair.remoteAddr).then(this.settled, this.settled);
      }
      pair.packetsSent++;
      pair.bytesSent += data.length;
    } catch {
      // The connection's end removes the viewer.
    }
  }

  /** Packets handed over but not yet taken by the kernel (the UDP socket's queue). */
  get backlog(): number {
    const connection = this.sender.dtlsTransport.iceTransport.connection as unknown as IceInternals;
    return this.pending + (udpSocket(connection.nominated?.protocol.transport)?.getSendQueueCount() ?? 0);
  }

  /** A packet of the viewer's stream went out: the figures its sender reports carry. */
  sent(packet: ForwardedPacket): void {
    const internals = this.internals;
    internals.ntpTimestamp = packet.ntpTimestamp;
    internals.rtpTimestamp = packet.timestamp;
    internals.octetCount += packet.payloadEnd - packet.headerSize;
    internals.packetCount = (internals.packetCount + 1) >>> 0;
    if (this.reporting) return;
    this.reporting = true;
    void this.sender.runRtcp();
  }
}
