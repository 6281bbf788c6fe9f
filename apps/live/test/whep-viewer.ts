import { createWriteStream } from 'node:fs';
import { RTCPeerConnection, uint16Gt, useH264, useNACK, useOPUS, usePLI, type RtpPacket } from 'werift';
import { DepacketizeCallback, JitterBufferCallback, RtpSourceCallback } from 'werift/nonstandard';

export interface WhepViewer {
  status: number;
  /** The answer's body when not 201 (the error). */
  error: string;
  location: string | null;
  answer: string;
  /** H.264 access units received so far (depacketized, Annex B, written to `file`). */
  frames(): number;
  /** Audio RTP packets received so far. */
  audioPackets(): number;
  /**
   * Each video frame's RTP timestamp and the wall clock of its first packet to arrive, in order
   * of arrival; retransmitted packets (numbered behind one that came) are left out.
   */
  videoArrivals(): { timestamp: number; at: number }[];
  /** Settles when the server ends the connection: an RTCP BYE for every stream it sent. */
  closed(): Promise<void>;
  stop(sendDelete?: boolean): Promise<void>;
}

const gathered = (pc: RTCPeerConnection) =>
  new Promise<void>((resolve) => {
    if (pc.iceGatheringState === 'complete') return resolve();
    pc.iceGatheringStateChange.subscribe((state) => state === 'complete' && resolve());
  });

/**
 * A WHEP viewer on werift: offers to receive H.264 video and Opus audio, and writes the video
 * it receives, depacketized, to `file` as an H.264 Annex B stream for ffmpeg to decode.
 */
export async function view(
  whepUrl: string,
  file: string,
  headers: Record<string, string> = {},
  /** The path to the server: the SDP as each side sees the other (lossy-link.ts). */
  link: { offer(sdp: string): string; answer(sdp: string): string } = {
    offer: (sdp) => sdp,
    answer: (sdp) => sdp,
  },
): Promise<WhepViewer> {
  const pc = new RTCPeerConnection({
    codecs: { video: [useH264({ rtcpFeedback: [useNACK(), usePLI()] })], audio: [useOPUS()] },
    iceAdditionalHostAddresses: ['127.0.0.1'],
    bundlePolicy: 'max-bundle',
  });
  pc.addTransceiver('video', { direction: 'recvonly' });
  pc.addTransceiver('audio', { direction: 'recvonly' });
  let frames = 0;
  let audioPackets = 0;
  const out = createWriteStream(file);
  const source = new RtpSourceCallback();
  const jitter = new JitterBufferCallback(90000, { latency: 100 });
  const depacketizer = new DepacketizeCallback('MPEG4/ISO/AVC', {
    isFinalPacketInSequence: (header) => header.marker,
  });
  source.pipe(jitter.input);
  jitter.pipe(depacketizer.input);
  depacketizer.pipe((input) => {
    if (!input.frame) return;
    frames++;
    out.write(input.frame.data);
  });
  const videoArrivals: { timestamp: number; at: number }[] = [];
  let latestSequence: number | undefined;
  /** The SSRCs media came in on. */
  const received = new Set<number>();
  pc.onTrack.subscribe((track) => {
    track.onReceiveRtp.subscribe((packet: RtpPacket) => {
      received.add(packet.header.ssrc);
      if (track.kind !== 'video') {
        audioPackets++;
        return;
      }
      const { timestamp, sequenceNumber } = packet.header;
      if (latestSequence === undefined || uint16Gt(sequenceNumber, latestSequence)) {
        latestSequence = sequenceNumber;
        if (videoArrivals.at(-1)?.timestamp !== timestamp) videoArrivals.push({ timestamp, at: Date.now() });
      }
      source.input(packet.clone());
    });
  });
  await pc.setLocalDescription(await pc.createOffer());
  await gathered(pc);
  const response = await fetch(whepUrl, {
    method: 'POST',
    headers: { 'Content-Type': 'application/sdp', ...headers },
    body: link.offer(pc.localDescription!.sdp),
  });
  const body = await response.text();
  const location = response.headers.get('location');
  let stopped = false;
  const stop = async (sendDelete = true) => {
    if (stopped) return;
    stopped = true;
    if (sendDelete && location) await fetch(new URL(location, whepUrl), { method: 'DELETE' });
    source.destroy();
    await new Promise((resolve) => out.end(resolve));
    await pc.close();
  };
  if (response.status !== 201) {
    await stop(false);
    return {
      status: response.status,
      error: body,
      location,
      answer: '',
      frames: () => 0,
      audioPackets: () => 0,
      videoArrivals: () => [],
      closed: () => Promise.resolve(),
      stop,
    };
  }
  await pc.setRemoteDescription({ type: 'answer', sdp: link.answer(body) });
  const closed = byeOfEveryStream(pc, received);
  return {
    status: 201,
    error: '',
    location,
    answer: body,
    frames: () => frames,
    audioPackets: () => audioPackets,
    videoArrivals: () => videoArrivals,
    closed: () => closed,
    stop,
  };
}

/** The SSRCs named by the BYE packets of a decrypted compound RTCP packet. */
function* byeSsrcs(rtcp: Buffer): Generator<number> {
  for (let at = 0; at + 4 <= rtcp.length; at += 4 + 4 * rtcp.readUInt16BE(at + 2)) {
    if (rtcp[at + 1] !== 203) continue;
    for (let i = 0; i < (rtcp[at]! & 0x1f); i++) yield rtcp.readUInt32BE(at + 4 + 4 * i);
  }
}

/**
 * Settles once RTCP BYE named every stream `received` came in: werift drops BYE packets, so they
 * are read off its SRTCP session as it decrypts them.
 */
function byeOfEveryStream(pc: RTCPeerConnection, received: Set<number>): Promise<void> {
  return new Promise((resolve) => {
    const ended = new Set<number>();
    const dtls = pc.dtlsTransports[0]!;
    dtls.onStateChange.subscribe((state) => {
      if (state !== 'connected') return;
      const srtcp = dtls.srtcp;
      const decrypt = srtcp.decrypt.bind(srtcp);
      srtcp.decrypt = (data) => {
        const decrypted = decrypt(data);
        for (const ssrc of byeSsrcs(decrypted)) ended.add(ssrc);
        if (received.size > 0 && [...received].every((ssrc) => ended.has(ssrc))) resolve();
        return decrypted;
      };
    });
  });
}
