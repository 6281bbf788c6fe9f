import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';

/** The Sora JavaScript SDK as published on npm, unchanged. */
const SORA_JS = readFileSync(fileURLToPath(import.meta.resolve('sora-js-sdk')));

/**
 * A plain page publishing or viewing with the SDK, as a customer's page would. `publish(signalingUrl,
 * channelId, accessToken, camera)` takes the camera and microphone when `camera` (a browser with
 * fake devices), else a canvas and an oscillator; it resolves with the connection id and the
 * wall clock of the SDK's connect, or rejects with the SDK's error. `window.events` lists the
 * SDK's notify and disconnect callbacks. `view(signalingUrl, channelId, playbackToken)` connects
 * `recvonly` and plays what arrives in a muted `<video id="viewer">`; it resolves with the
 * viewer's connection id.
 */
const PAGE = `<!doctype html><meta charset="utf-8"><title>Sora publisher</title>
<script type="module">
import Sora from './sora.js';
function drawn() {
  const canvas = Object.assign(document.createElement('canvas'), { width: 640, height: 360 });
  const context = canvas.getContext('2d');
  let frame = 0;
  setInterval(() => {
    context.fillStyle = 'hsl(' + ((frame++ * 7) % 360) + ', 80%, 50%)';
    context.fillRect(0, 0, 640, 360);
  }, 33);
  const audio = new AudioContext();
  const tone = audio.createOscillator();
  const destination = audio.createMediaStreamDestination();
  tone.connect(destination);
  tone.start();
  return new MediaStream([...canvas.captureStream(30).getVideoTracks(), ...destination.stream.getAudioTracks()]);
}
window.publish = async (signalingUrl, channelId, accessToken, camera) => {
  const stream = camera
    ? await navigator.mediaDevices.getUserMedia({ video: { width: 1280, height: 720, frameRate: 30 }, audio: true })
    : drawn();
  const publisher = Sora.connection(signalingUrl).sendonly(channelId, { access_token: accessToken });
  window.events = [];
  publisher.on('notify', (message) => window.events.push('notify:' + message.event_type));
  publisher.on('disconnect', (event) => window.events.push('disconnect:' + event.type));
  window.publisher = publisher;
  const connectedAt = Date.now();
  await publisher.connect(stream);
  return { connectionId: publisher.connectionId, connectedAt };
};
window.view = async (signalingUrl, channelId, accessToken) => {
  document.getElementById('viewer')?.remove();
  const video = Object.assign(document.createElement('video'), { muted: true, autoplay: true, playsInline: true });
  video.id = 'viewer';
  document.body.append(video);
  const viewer = Sora.connection(signalingUrl).recvonly(channelId, accessToken ? { access_token: accessToken } : null);
  viewer.on('track', (event) => (video.srcObject = event.streams[0]));
  window.viewer = viewer;
  await viewer.connect();
  return viewer.connectionId;
};
</script>`;

/**
 * The customer's site: the page and the SDK served on a loopback port of their own (a page a
 * browser automation fulfils has no address, and Chromium's local network access checks then
 * refuse its WebSocket to the live server), a secure context as localhost.
 */
export async function servePublisherPage(): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((request, response) => {
    const script = request.url === '/sora.js';
    response.writeHead(200, { 'Content-Type': script ? 'text/javascript' : 'text/html' });
    response.end(script ? SORA_JS : PAGE);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://localhost:${(server.address() as AddressInfo).port}/`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** What `publish` resolves with in the page. */
export interface SoraPublished {
  connectionId: string;
  connectedAt: number;
}
