import { RTCPeerConnection, useH264, useNACK, useOPUS, usePLI, useVP8 } from 'werift';
import WebSocket from 'ws';

export interface SoraViewer {
  /** RTP packets received so far, of every track. */
  packets(): number;
  /** Settles once the peer connection is up. */
  connected: Promise<void>;
  /** The close code and reason the server ended the signaling with. */
  closed: Promise<{ code: number; reason: string }>;
  /** Sends `disconnect`, closes the signaling and the peer connection. */
  leave(): Promise<void>;
}

/**
 * A werift viewer over Sora signaling at `signalingUrl` (ws://…/signaling): `role: recvonly`
 * with the fields of `connect` (channel_id, metadata), answering the server's offer and pings.
 */
export function soraViewer(signalingUrl: string, connect: Record<string, unknown>): SoraViewer {
  const pc = new RTCPeerConnection({
    codecs: {
      video: [useH264({ rtcpFeedback: [useNACK(), usePLI()] }), useVP8()],
      audio: [useOPUS()],
    },
    iceAdditionalHostAddresses: ['127.0.0.1'],
  });
  let packets = 0;
  pc.onTrack.subscribe((track) => track.onReceiveRtp.subscribe(() => void packets++));
  const connected = new Promise<void>((resolve) =>
    pc.connectionStateChange.subscribe((state) => state === 'connected' && resolve()),
  );
  const ws = new WebSocket(signalingUrl);
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  ws.on('message', (data) => {
    const message = JSON.parse(data.toString()) as { type: string; sdp?: string };
    if (message.type === 'ping') ws.send(JSON.stringify({ type: 'pong' }));
    if (message.type !== 'offer') return;
    void (async () => {
      await pc.setRemoteDescription({ type: 'offer', sdp: message.sdp! });
      await pc.setLocalDescription(await pc.createAnswer());
      ws.send(JSON.stringify({ type: 'answer', sdp: pc.localDescription!.sdp }));
    })();
  });
  ws.on('open', () => ws.send(JSON.stringify({ type: 'connect', role: 'recvonly', ...connect })));
  return {
    packets: () => packets,
    connected,
    closed,
    async leave() {
      if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ type: 'disconnect' }));
      ws.close();
      await pc.close();
    },
  };
}
