import type { Socket } from 'node:dgram';
import type { RTCDtlsTransport, RTCPeerConnection } from 'werift';

/** DTLS record content type alert, and the alert itself: level warning, close_notify. */
const ALERT = 21;
const CLOSE_NOTIFY = Buffer.from([1, 0]);

/**
 * Sends the DTLS close_notify alert (RFC 5246 7.2.1, RFC 6347) on each connected transport of
 * the peer connection, encrypted as werift encrypts its own records. werift's close() only
 * drops its sockets (the alert is a "todo" in its DTLS transport), so a publisher would notice
 * only when its consent checks expire, 7 to 34 s later; on the alert its DTLS stack closes at
 * once (aiortc's OpenSSL and werift do in the tests).
 *
 * It resolves once each alert has left its socket, so that the peer connection may close next.
 */
export async function sendCloseNotify(pc: RTCPeerConnection): Promise<void> {
  for (const transport of pc.dtlsTransports) {
    const socket = transport.dtls;
    if (transport.state !== 'connected' || !socket) continue;
    const { version, epoch } = socket.dtls;
    const sequenceNumber = ++socket.dtls.recordSequenceNumber;
    const fragment = socket.cipher.cipher.encrypt(socket.sessionType, CLOSE_NOTIFY, {
      type: ALERT,
      version: (version.major << 8) | version.minor,
      epoch,
      sequenceNumber,
    });
    const header = Buffer.alloc(13);
    header.writeUInt8(ALERT, 0);
    header.writeUInt8(version.major, 1);
    header.writeUInt8(version.minor, 2);
    header.writeUInt16BE(epoch, 3);
    header.writeUIntBE(sequenceNumber, 5, 6);
    header.writeUInt16BE(fragment.length, 11);
    await sendDatagram(transport, Buffer.concat([header, fragment]));
  }
}

/**
 * Sends on the selected candidate pair's UDP socket and waits for dgram's callback. werift's
 * own send does not wait: dgram resolves even an IP literal asynchronously, and a socket closed
 * before that drops the datagram (under load the alert was lost this way 1 time in 3).
 */
async function sendDatagram(transport: RTCDtlsTransport, record: Buffer): Promise<void> {
  const pair = transport.iceTransport.connection.nominated;
  const udp = (pair?.protocol as { transport?: { socket?: Socket } } | undefined)?.transport?.socket;
  if (!pair || !udp) return transport.dtls!.transport.send(record);
  const [host, port] = pair.remoteAddr;
  await new Promise<void>((resolve, reject) =>
    udp.send(record, port, host, (error) => (error ? reject(error) : resolve())),
  );
}
