/**
 * A WHIP (RFC 9725) publisher: one POST of the SDP offer with a bearer credential, the answer
 * back with a Location naming the session, DELETE on that Location to stop. The credential is
 * asked for at each request, since a short-lived one taken at the start may be gone at the end.
 */
export class WhipPublisher {
  private peer: RTCPeerConnection | null = null;
  private location: string | null = null;

  constructor(
    private readonly endpoint: string,
    private readonly credential: () => Promise<string>,
  ) {}

  async start(stream: MediaStream): Promise<void> {
    const peer = new RTCPeerConnection();
    this.peer = peer;
    for (const track of stream.getTracks()) peer.addTransceiver(track, { direction: 'sendonly' });
    await peer.setLocalDescription(await peer.createOffer());
    await iceGatheringComplete(peer);
    const response = await fetch(this.endpoint, {
      method: 'POST',
      headers: { 'Content-Type': 'application/sdp', Authorization: `Bearer ${await this.credential()}` },
      body: peer.localDescription?.sdp ?? '',
    });
    if (response.status !== 201) throw new WhipError(response.status, (await response.text()).trim());
    const location = response.headers.get('Location');
    this.location = location ? new URL(location, this.endpoint).toString() : null;
    await peer.setRemoteDescription({ type: 'answer', sdp: await response.text() });
  }

  async stop(): Promise<void> {
    this.peer?.close();
    this.peer = null;
    const location = this.location;
    this.location = null;
    // Without the DELETE (signed out, network gone) the closed peer connection still ends the session.
    if (location) {
      await this.credential()
        .then((bearer) =>
          fetch(location, { method: 'DELETE', headers: { Authorization: `Bearer ${bearer}` } }),
        )
        .catch(() => undefined);
    }
  }
}

export class WhipError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
  ) {
    super(`WHIP ${status}`);
  }
}

/** The offer goes out with its candidates: WHIP and WHEP servers need not support trickle ICE. */
export function iceGatheringComplete(peer: RTCPeerConnection, timeoutMs = 3000): Promise<void> {
  if (peer.iceGatheringState === 'complete') return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      peer.removeEventListener('icegatheringstatechange', check);
      resolve();
    };
    const check = () => {
      if (peer.iceGatheringState === 'complete') done();
    };
    peer.addEventListener('icegatheringstatechange', check);
    setTimeout(done, timeoutMs);
  });
}

/**
 * A test pattern with a running clock and a tone, for publishing without a camera: moving
 * colour bars from a canvas and a 440 Hz oscillator.
 */
export function testPatternStream(width = 1280, height = 720): { stream: MediaStream; stop: () => void } {
  const canvas = document.createElement('canvas');
  canvas.width = width;
  canvas.height = height;
  const context = canvas.getContext('2d')!;
  const colours = ['#ffffff', '#ffff00', '#00ffff', '#00ff00', '#ff00ff', '#ff0000', '#0000ff'];
  let frame = 0;
  const timer = setInterval(() => {
    const bar = width / colours.length;
    colours.forEach((colour, index) => {
      context.fillStyle = colour;
      context.fillRect((index * bar + frame * 4) % width, 0, bar + 1, height);
    });
    context.fillStyle = 'rgba(0,0,0,0.7)';
    context.fillRect(0, height - 120, width, 120);
    context.fillStyle = '#ffffff';
    context.font = 'bold 64px monospace';
    context.fillText(new Date().toISOString().slice(11, 23), 40, height - 40);
    frame++;
  }, 1000 / 30);
  const audio = new AudioContext();
  const oscillator = audio.createOscillator();
  oscillator.frequency.value = 440;
  const destination = audio.createMediaStreamDestination();
  oscillator.connect(destination);
  oscillator.start();
  const stream = new MediaStream([
    ...canvas.captureStream(30).getVideoTracks(),
    ...destination.stream.getAudioTracks(),
  ]);
  return {
    stream,
    stop: () => {
      clearInterval(timer);
      stream.getTracks().forEach((track) => track.stop());
      oscillator.stop();
      void audio.close();
    },
  };
}
