import {
  GenericNack,
  RTCPeerConnection,
  RTCRtpCodecParameters,
  RtcpTransportLayerFeedback,
  RtpHeader,
  RtpPacket,
  useH264,
  useNACK,
  usePLI,
} from 'werift';
import { afterEach, describe, expect, it } from 'vitest';
import { h264KeyframeStart, TrackFanout } from './fanout.ts';

const h264 = () => useH264({ rtcpFeedback: [useNACK(), usePLI()] });
const rtx = () => new RTCRtpCodecParameters({ mimeType: 'video/rtx', clockRate: 90000 });
const peers: RTCPeerConnection[] = [];

afterEach(async () => {
  await Promise.all(peers.splice(0).map((pc) => pc.close()));
});

/** A werift sender and receiver connected over loopback, as the live server and a viewer. */
async function connectedPair() {
  const options = { iceAdditionalHostAddresses: ['127.0.0.1'], bundlePolicy: 'max-bundle' as const };
  const server = new RTCPeerConnection({ codecs: { video: [h264(), rtx()] }, ...options });
  const viewer = new RTCPeerConnection({ codecs: { video: [h264(), rtx()] }, ...options });
  peers.push(server, viewer);
  const sending = server.addTransceiver('video', { direction: 'sendonly' });
  const receiving = viewer.addTransceiver('video', { direction: 'recvonly' });
  const received: RtpPacket[] = [];
  viewer.onTrack.subscribe((track) => track.onReceiveRtp.subscribe((packet) => void received.push(packet)));
  await server.setLocalDescription(await server.createOffer());
  await viewer.setRemoteDescription(server.localDescription!);
  await viewer.setLocalDescription(await viewer.createAnswer());
  await server.setRemoteDescription(viewer.localDescription!);
  await Promise.all(
    [server, viewer].map(
      (pc) =>
        new Promise<void>((resolve) =>
          pc.connectionStateChange.subscribe((s) => s === 'connected' && resolve()),
        ),
    ),
  );
  return { sender: sending.sender, receiver: receiving.receiver, received };
}

const packet = (sequenceNumber: number, timestamp: number, first: number) =>
  new RtpPacket(
    new RtpHeader({ payloadType: 100, sequenceNumber, timestamp, ssrc: 42, marker: true }),
    Buffer.from([first, sequenceNumber & 0xff, 0xaa, 0xbb]),
  );

const until = async (done: () => boolean) => {
  for (let wait = 0; wait < 100 && !done(); wait++) await new Promise((resolve) => setTimeout(resolve, 20));
};

describe('TrackFanout with werift peers', () => {
  it('starts a viewer at a keyframe, renumbers for it, and answers its NACK over RTX', async () => {
    const { sender, receiver, received } = await connectedPair();
    const fanout = new TrackFanout(h264KeyframeStart, () => {});
    fanout.add(sender);
    // A P slice first (skipped: the viewer waits for a keyframe), then an SPS and two slices.
    fanout.forward(packet(1000, 1, 0x41));
    fanout.forward(packet(1001, 2, 0x67));
    fanout.forward(packet(1002, 2, 0x65));
    fanout.forward(packet(1003, 3, 0x41));
    await until(() => received.length === 3);
    expect(received.map((p) => p.payload[0])).toEqual([0x67, 0x65, 0x41]);
    expect(received.map((p) => p.header.ssrc)).toEqual([sender.ssrc, sender.ssrc, sender.ssrc]);
    const [first] = received;
    expect(received.map((p) => p.header.sequenceNumber)).toEqual(
      [0, 1, 2].map((offset) => (first!.header.sequenceNumber + offset) & 0xffff),
    );
    expect(received[1]!.payload).toEqual(packet(1002, 2, 0x65).payload);

    const lost = received[1]!.header.sequenceNumber;
    await receiver.dtlsTransport.sendRtcp([
      new RtcpTransportLayerFeedback({
        feedback: new GenericNack({ senderSsrc: 1, mediaSourceSsrc: sender.ssrc, lost: [lost] }),
      }),
    ]);
    await until(() => received.length === 4);
    expect(received[3]!.header.sequenceNumber).toBe(lost);
    expect(received[3]!.payload).toEqual(packet(1002, 2, 0x65).payload);
    // It came in the RTX stream: werift's receiver keeps statistics per SSRC received.
    const streams = (receiver as unknown as { remoteStreams: Record<number, unknown> }).remoteStreams;
    expect(streams[sender.rtxSsrc]).toBeDefined();
  });
});
