import { spawn, type ChildProcess } from 'node:child_process';
import { createSocket, type Socket } from 'node:dgram';
import { MediaStreamTrack, RTCPeerConnection, useH264, useOPUS, useVP8 } from 'werift';

export interface PublishOptions {
  whipUrl: string;
  token: string;
  codec: 'vp8' | 'h264';
  width: number;
  height: number;
  fps: number;
  /** A whole lavfi graph ending in [out0] instead of the plain test source. */
  source?: string;
  audio?: boolean;
  /** Video bitrate of the publisher's own encode. */
  bitrate?: string;
  /** Seconds between the publisher's keyframes (default 2); it never answers PLI or FIR. */
  keyframeSeconds?: number;
  /** Rewrites werift's offer before it is POSTed: the SDP shapes other stacks send. */
  offer?: (sdp: string) => string;
}

export interface Publisher {
  status: number;
  location: string | null;
  /** The answer's body when not 201 (the error). */
  error: string;
  /** The SDP answer on 201. */
  answer: string;
  /** Wall clock of the WHIP POST. */
  postedAt: number;
  /** Milliseconds from the POST to the peer connection being connected. */
  connectedAfterMs?: number;
  /** Wall clock of the first video RTP packet: frame time 0 of the test source, give or take its encode. */
  firstPacketAt(): Promise<number>;
  /**
   * Wall clock of frame time 0 as the packets so far place it: the least of each video packet's
   * arrival minus the RTP time elapsed since the first. ffmpeg's first frames wait on the
   * encoder starting, so the first packet alone places frame time 0 late by a varying amount;
   * the source is paced (-re), so a packet sent as soon as its frame was made places it right.
   */
  frameTimeZero(): number | undefined;
  /** Wall clock of the DTLS transport closing: the server's close alert, seen by the publisher. */
  closedAt(): Promise<number>;
  stop(sendDelete?: boolean): Promise<void>;
}

const gathered = (pc: RTCPeerConnection) =>
  new Promise<void>((resolve) => {
    if (pc.iceGatheringState === 'complete') return resolve();
    pc.iceGatheringStateChange.subscribe((state) => state === 'complete' && resolve());
  });

async function udpInto(track: MediaStreamTrack): Promise<Socket> {
  const socket = createSocket('udp4');
  socket.on('message', (packet) => track.writeRtp(packet));
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return socket;
}

/**
 * A WHIP publisher as a test or benchmark needs one: werift sends what ffmpeg encodes from its
 * test sources (testsrc2 video, a sine tone) as RTP to local UDP sockets.
 */
export async function publish(options: PublishOptions): Promise<Publisher> {
  const withAudio = options.audio ?? true;
  const pc = new RTCPeerConnection({
    codecs: { video: [options.codec === 'h264' ? useH264() : useVP8()], audio: [useOPUS()] },
    iceAdditionalHostAddresses: ['127.0.0.1'],
    bundlePolicy: 'max-bundle',
  });
  const video = new MediaStreamTrack({ kind: 'video' });
  const audio = new MediaStreamTrack({ kind: 'audio' });
  pc.addTransceiver(video, { direction: 'sendonly' });
  if (withAudio) pc.addTransceiver(audio, { direction: 'sendonly' });
  await pc.setLocalDescription(await pc.createOffer());
  await gathered(pc);
  const postedAt = Date.now();
  const response = await fetch(options.whipUrl, {
    method: 'POST',
    headers: { 'Content-Type': 'application/sdp', Authorization: `Bearer ${options.token}` },
    body: (options.offer ?? ((sdp) => sdp))(pc.localDescription!.sdp),
  });
  const body = await response.text();
  if (response.status !== 201) {
    await pc.close();
    return {
      status: response.status,
      postedAt,
      location: null,
      error: body,
      answer: '',
      firstPacketAt: () => Promise.reject(new Error('not publishing')),
      frameTimeZero: () => undefined,
      closedAt: () => Promise.reject(new Error('not publishing')),
      stop: async () => {},
    };
  }
  const location = response.headers.get('location');
  await pc.setRemoteDescription({ type: 'answer', sdp: body });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('publisher did not connect')), 10_000);
    pc.connectionStateChange.subscribe((state) => {
      if (state === 'connected') {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  const connectedAfterMs = Date.now() - postedAt;
  // werift's connectionState ignores a close alert; its DTLS transport reports it.
  const closed = new Promise<number>((resolve) =>
    pc.dtlsTransports[0]!.onStateChange.subscribe((state) => state === 'closed' && resolve(Date.now())),
  );
  const videoSocket = await udpInto(video);
  const firstPacket = new Promise<number>((resolve) =>
    videoSocket.once('message', () => resolve(Date.now())),
  );
  let firstTimestamp: number | undefined;
  let zero: number | undefined;
  videoSocket.on('message', (packet: Buffer) => {
    if (packet.length < 12) return;
    const timestamp = packet.readUInt32BE(4);
    firstTimestamp ??= timestamp;
    // RTP time is 90 kHz and wraps at 2^32 (>>> 0 keeps the difference unsigned).
    const placed = Date.now() - ((timestamp - firstTimestamp) >>> 0) / 90;
    if (zero === undefined || placed < zero) zero = placed;
  });
  const audioSocket = withAudio ? await udpInto(audio) : undefined;
  const encoder =
    options.codec === 'h264'
      ? ['-c:v', 'libx264', '-profile:v', 'baseline', '-preset', 'ultrafast', '-tune', 'zerolatency']
      : ['-c:v', 'libvpx', '-deadline', 'realtime', '-cpu-used', '8'];
  const sender: ChildProcess = spawn(
    'ffmpeg',
    [
      '-hide_banner',
      '-loglevel',
      'error',
      '-re',
      '-f',
      'lavfi',
      '-i',
      options.source ?? `testsrc2=size=${options.width}x${options.height}:rate=${options.fps}`,
      ...(withAudio ? ['-re', '-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=48000'] : []),
      '-map',
      '0:v',
      '-pix_fmt',
      'yuv420p',
      ...encoder,
      '-g',
      String(Math.round(options.fps * (options.keyframeSeconds ?? 2))),
      '-b:v',
      options.bitrate ?? '1M',
      '-f',
      'rtp',
      '-payload_type',
      '96',
      `rtp://127.0.0.1:${(videoSocket.address() as { port: number }).port}?pkt_size=1200`,
      ...(audioSocket
        ? [
            '-map',
            '1:a',
            '-c:a',
            'libopus',
            '-b:a',
            '64k',
            '-f',
            'rtp',
            '-payload_type',
            '111',
            `rtp://127.0.0.1:${(audioSocket.address() as { port: number }).port}?pkt_size=1200`,
          ]
        : []),
    ],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const exited = new Promise<void>((resolve) => sender.on('close', () => resolve()));
  let stopped = false;
  return {
    status: 201,
    postedAt,
    location,
    error: '',
    answer: body,
    connectedAfterMs,
    firstPacketAt: () => firstPacket,
    frameTimeZero: () => zero,
    closedAt: () => closed,
    async stop(sendDelete = true) {
      if (stopped) return;
      stopped = true;
      sender.kill('SIGKILL');
      await exited;
      videoSocket.close();
      audioSocket?.close();
      if (sendDelete && location) {
        await fetch(new URL(location, options.whipUrl), {
          method: 'DELETE',
          headers: { Authorization: `Bearer ${options.token}` },
        });
      }
      await pc.close();
    },
  };
}
