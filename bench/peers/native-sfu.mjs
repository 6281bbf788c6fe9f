// The floor of WebRTC forwarding (bench/live-webrtc.ts): libdatachannel (node-datachannel: ICE,
// DTLS and SRTP in C++, sending from its own threads) answering WHEP offers on PORT and sending
// every viewer the same stream of RTP packets, at BITRATE (bits/s) of 30 fps video in packets
// of at most 1,200 bytes and 50 Opus packets of 160 bytes a second, each packet copied with the
// viewer's sequence number: what a native SFU spends per viewer, with none of our logic. GET
// /sent answers the RTP bytes (header and payload) each viewer has been sent so far. Plain
// JavaScript, run by bare node.
import { createServer } from 'node:http';
import nodeDataChannel from 'node-datachannel';

const { PeerConnection } = nodeDataChannel;
const FPS = 30;
const OPUS_PER_SECOND = 50;
const PACKET = 1_200;
const RTP_HEADER = 12;
const frameBytes = Number(process.env.BITRATE) / 8 / FPS;

/** Each viewer's tracks, sent to once open; kept here, or the binding lets their callbacks go. */
const viewers = new Set();
let sent = 0;

function answer(offer) {
  return new Promise((resolve, reject) => {
    const pc = new PeerConnection('viewer', { iceServers: [], bindAddress: '127.0.0.1' });
    const viewer = { pc, tracks: [], sequence: { video: 0, audio: 0 } };
    viewers.add(viewer);
    pc.onTrack((track) => viewer.tracks.push(track));
    pc.onGatheringStateChange((state) => state === 'complete' && resolve(pc.localDescription().sdp));
    pc.onStateChange((state) => {
      if (state === 'failed') reject(new Error('viewer failed'));
      // A viewer gone (its bench step over) costs nothing more.
      if (['disconnected', 'failed', 'closed'].includes(state)) viewers.delete(viewer);
    });
    pc.setRemoteDescription(offer, 'offer');
  });
}

/** The RTP packets of one frame's time (header included): 30 fps video, Opus every 20 ms. */
function frameOf(frame) {
  const video = [];
  for (let left = frameBytes; left > 0; left -= PACKET - RTP_HEADER)
    video.push(Math.min(PACKET, Math.ceil(left) + RTP_HEADER));
  const audio =
    Math.floor((frame * OPUS_PER_SECOND) / FPS) - Math.floor(((frame - 1) * OPUS_PER_SECOND) / FPS);
  return { video, audio: Array(audio).fill(160) };
}

/** One RTP packet of `bytes` for `track` of `viewer`, in its own buffer: the binding sends later. */
function send(viewer, track, kind, timestamp, bytes, marker) {
  const packet = Buffer.alloc(bytes);
  packet[0] = 0x80;
  packet[1] = (kind === 'video' ? 96 : 111) | (marker ? 0x80 : 0);
  viewer.sequence[kind] = (viewer.sequence[kind] + 1) & 0xffff;
  packet.writeUInt16BE(viewer.sequence[kind], 2);
  packet.writeUInt32BE(timestamp >>> 0, 4);
  packet.writeUInt32BE(kind === 'video' ? 1 : 2, 8);
  try {
    track.sendMessageBinary(packet);
  } catch {
    // The viewer's connection closed since isOpen(): it is gone.
  }
}

let frame = 0;
setInterval(() => {
  const { video, audio } = frameOf(++frame);
  for (const viewer of viewers)
    for (const track of viewer.tracks) {
      if (!track.isOpen()) continue;
      const kind = track.type();
      const sizes = kind === 'video' ? video : audio;
      const clock = kind === 'video' ? 3_000 : 1_600;
      sizes.forEach((bytes, n) => send(viewer, track, kind, frame * clock, bytes, n === sizes.length - 1));
    }
  sent += [...video, ...audio].reduce((sum, bytes) => sum + bytes, 0);
}, 1000 / FPS);

const MAX_OFFER_BYTES = 64 * 1024;

createServer((request, response) => {
  if (request.method === 'GET') return response.end(JSON.stringify({ sent }));
  // An offer is a few kilobytes: a body past MAX_OFFER_BYTES ends the connection, so that what
  // the peer reads is bounded like every server's here.
  let body = '';
  request.on('data', (chunk) => {
    body += chunk;
    if (body.length > MAX_OFFER_BYTES) request.destroy();
  });
  request.on('end', () =>
    answer(body).then(
      (sdp) => response.writeHead(201, { 'Content-Type': 'application/sdp' }).end(sdp),
      (error) => response.writeHead(500).end(String(error)),
    ),
  );
}).listen(Number(process.env.PORT), '127.0.0.1');
