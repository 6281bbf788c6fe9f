import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The ICE candidate lines of each m-section replaced by one host candidate, 127.0.0.1:`port`. */
function onlyCandidate(sdp: string, port: number): string {
  return sdp
    .split(/(?=^m=)/m)
    .map((section) => {
      let first = true;
      return section.replace(/^a=candidate:.*(\r?\n)/gm, (_, eol: string) => {
        if (!first) return '';
        first = false;
        return `a=candidate:1 1 udp 2130706431 127.0.0.1 ${port} typ host${eol}`;
      });
    })
    .join('');
}

/** Whether a datagram is RTP (SRTP keeps its header clear): not STUN, DTLS or RTCP (RFC 5761). */
function isRtp(datagram: Buffer): boolean {
  const payloadType = datagram[1]! & 0x7f;
  return datagram[0]! >> 6 === 2 && (payloadType < 64 || payloadType > 95);
}

async function bound(): Promise<{ socket: Socket; port: number }> {
  const socket = createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return { socket, port: (socket.address() as AddressInfo).port };
}

export interface LossyLink {
  /** The share of the server's RTP to the viewer dropped, 0 to 1; set it at any time. */
  loss: number;
  /** The viewer's offer, its candidates replaced by the link's end towards the server. */
  offer(sdp: string): string;
  /** The server's answer, its candidates replaced by the link's end towards the viewer. */
  answer(sdp: string): string;
  close(): void;
}

/**
 * A UDP link between a WebRTC viewer and the live server that loses a share of the server's RTP,
 * as a congested path does: the viewer and the server each see the other at one of the link's
 * two sockets (their SDP rewritten), and every datagram goes through it, ICE and DTLS untouched.
 */
export async function lossyLink(): Promise<LossyLink> {
  const towardsViewer = await bound();
  const towardsServer = await bound();
  let viewer: RemoteInfo | undefined;
  let serverPort: number | undefined;
  const link: LossyLink = {
    loss: 0,
    offer: (sdp) => onlyCandidate(sdp, towardsServer.port),
    answer: (sdp) => {
      serverPort = Number(/ 127\.0\.0\.1 (\d+) typ host/.exec(sdp)?.[1]);
      return onlyCandidate(sdp, towardsViewer.port);
    },
    close: () => {
      towardsViewer.socket.close();
      towardsServer.socket.close();
    },
  };
  towardsViewer.socket.on('message', (datagram, from) => {
    viewer = from;
    if (serverPort) towardsServer.socket.send(datagram, serverPort, '127.0.0.1');
  });
  towardsServer.socket.on('message', (datagram) => {
    if (!viewer || (isRtp(datagram) && Math.random() < link.loss)) return;
    towardsViewer.socket.send(datagram, viewer.port, viewer.address);
  });
  return link;
}

/**
 * A WHEP endpoint in front of `whepUrl` whose offers and answers go through `link`: for a viewer
 * in another process (aiortc), which posts its offer itself. Answers the server's status and
 * answer; `close` stops it.
 */
export async function whepThrough(link: LossyLink, whepUrl: string): Promise<{ url: string; close(): void }> {
  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const answer = await fetch(whepUrl, {
      method: 'POST',
      headers: { 'Content-Type': 'application/sdp' },
      body: link.offer(Buffer.concat(chunks).toString()),
    });
    const body = await answer.text();
    response
      .writeHead(answer.status, { 'Content-Type': answer.headers.get('content-type') ?? 'text/plain' })
      .end(answer.status === 201 ? link.answer(body) : body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    close: () => server.close(),
  };
}
