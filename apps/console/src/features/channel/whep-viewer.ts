import { iceGatheringComplete, WhipError } from './whip-publisher.ts';

/** How long a connection may stay disconnected before the player takes it as ended. */
const DISCONNECTED_MS = 4_000;

/**
 * A WHEP viewer: one POST of an offer to receive video and audio, the answer back with a
 * Location naming the viewer, DELETE on that Location to stop. Refusals are WhipError: WHEP
 * answers them as WHIP does.
 */
export class WhepViewer {
  private peer: RTCPeerConnection | null = null;
  private location: string | null = null;

  constructor(private readonly endpoint: string) {}

  /**
   * Starts receiving; resolves with the stream once the answer is applied. `onEnded` is called
   * if the connection ends before stop(): the server ended it (a live server short of room sheds
   * its newest viewers; it goes silent, as one that went away does) or it failed.
   */
  async start(onEnded: () => void = () => undefined): Promise<MediaStream> {
    const peer = new RTCPeerConnection();
    this.peer = peer;
    const ended = () => {
      if (this.peer === peer) onEnded();
    };
    // Chromium calls a silent server disconnected within seconds and failed only after 30:
    // disconnected for DISCONNECTED_MS is ended (a network blip recovers before).
    let silence: ReturnType<typeof setTimeout> | undefined;
    peer.addEventListener('connectionstatechange', () => {
      clearTimeout(silence);
      if (peer.connectionState === 'failed' || peer.connectionState === 'closed') ended();
      else if (peer.connectionState === 'disconnected') silence = setTimeout(ended, DISCONNECTED_MS);
    });
    const stream = new MediaStream();
    peer.addEventListener('track', (event) => stream.addTrack(event.track));
    peer.addTransceiver('video', { direction: 'recvonly' });
    peer.addTransceiver('audio', { direction: 'recvonly' });
    await peer.setLocalDescription(await peer.createOffer());
    await iceGatheringComplete(peer);
    const response = await fetch(this.endpoint, {
      method: 'POST',
      headers: { 'Content-Type': 'application/sdp' },
      body: peer.localDescription?.sdp ?? '',
    });
    const body = await response.text();
    if (response.status !== 201) throw new WhipError(response.status, refusalReason(body));
    const location = response.headers.get('Location');
    this.location = location ? new URL(location, this.endpoint).toString() : null;
    await peer.setRemoteDescription({ type: 'answer', sdp: body });
    // A server's DTLS close alert closes the transport, which Chromium's connection state does not show.
    const transport = peer.getReceivers()[0]?.transport;
    transport?.addEventListener('statechange', () => {
      if (transport.state === 'closed' || transport.state === 'failed') ended();
    });
    return stream;
  }

  /**
   * How long the received video waits in this browser before it is shown, in seconds: the
   * jitter buffer's average delay plus half the round trip to the server. The publisher's
   * capture and encode are not in it (no clock of theirs reaches the viewer).
   */
  async receiverDelay(): Promise<number | undefined> {
    const stats = await this.peer?.getStats();
    if (!stats) return undefined;
    let buffered: number | undefined;
    let roundTrip = 0;
    stats.forEach((report: Record<string, unknown>) => {
      if (report.type === 'inbound-rtp' && report.kind === 'video') {
        const delay = Number(report.jitterBufferDelay);
        const emitted = Number(report.jitterBufferEmittedCount);
        if (emitted > 0) buffered = delay / emitted;
      }
      if (
        report.type === 'candidate-pair' &&
        report.nominated &&
        typeof report.currentRoundTripTime === 'number'
      ) {
        roundTrip = report.currentRoundTripTime;
      }
    });
    return buffered === undefined ? undefined : buffered + roundTrip / 2;
  }

  async stop(): Promise<void> {
    this.peer?.close();
    this.peer = null;
    const location = this.location;
    this.location = null;
    if (location) await fetch(location, { method: 'DELETE' }).catch(() => undefined);
  }
}

/** The `error` of a refusal's JSON body, or the body itself. */
function refusalReason(body: string): string {
  try {
    return (JSON.parse(body) as { error?: string }).error ?? body;
  } catch {
    return body.trim();
  }
}
