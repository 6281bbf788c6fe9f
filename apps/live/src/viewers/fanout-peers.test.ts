import nodeDataChannel, { type PeerConnection } from 'node-datachannel';
import {
  GenericNack,
  PictureLossIndication,
  RTCPeerConnection,
  RtcpPayloadSpecificFeedback,
  RTCRtpCodecParameters,
  RtcpTransportLayerFeedback,
  RtpHeader,
  RtpPacket,
  useH264,
  useNACK,
  usePLI,
} from 'werift';
import { afterEach, describe, expect, it } from 'vitest';
import { h264KeyframeStart, sendTo, TrackFanout } from './fanout.ts';
import { OutgoingTrack } from './rtp-out.ts';

const peers: (RTCPeerConnection | PeerConnection)[] = [];

afterEach(async () => {
  await Promise.all(peers.splice(0).map((pc) => pc.close()));
});

const STREAM = { ssrc: 0x1234_5678, payloadType: 96 };
const RTX = { ssrc: 0x8765_4321, payloadType: 97 };

/**
 * A node-datachannel track sending H.264 with RTX, as the live server's, and a werift viewer
 * receiving it, connected over loopback.
 */
async function connectedPair() {
  const viewer = new RTCPeerConnection({
    codecs: {
      video: [
        useH264({ rtcpFeedback: [useNACK(), usePLI()] }),
        new RTCRtpCodecParameters({ mimeType: 'video/rtx', clockRate: 90000 }),
      ],
    },
    iceAdditionalHostAddresses: ['127.0.0.1'],
    bundlePolicy: 'max-bundle',
  });
  const server = new nodeDataChannel.PeerConnection('server', { iceServers: [], bindAddress: '127.0.0.1' });
  peers.push(viewer, server);
  const receiving = viewer.addTransceiver('video', { direction: 'recvonly' });
  const received: RtpPacket[] = [];
  viewer.onTrack.subscribe((track) => track.onReceiveRtp.subscribe((packet) => void received.push(packet)));
  await viewer.setLocalDescription(await viewer.createOffer());
  const offer = viewer.localDescription!.sdp;
  const payloadType = (name: string) => Number(new RegExp(`a=rtpmap:(\\d+) ${name}/`, 'i').exec(offer)![1]);
  const stream = { ...STREAM, payloadType: payloadType('H264') };
  const rtx = { ...RTX, payloadType: payloadType('rtx') };
  const video = new nodeDataChannel.Video('0', 'SendOnly');
  video.addVideoCodec(stream.payloadType, 'H264');
  video.addRTXCodec(rtx.payloadType, stream.payloadType, 90000);
  video.addSSRC(stream.ssrc, 'viewer');
  video.addSSRC(rtx.ssrc, 'viewer');
  video.parseSdpLine(`a=ssrc-group:FID ${stream.ssrc} ${rtx.ssrc}`);
  const track = server.addTrack(video);
  const open = new Promise<void>((resolve) => track.onOpen(resolve));
  const answered = new Promise<string>((resolve) =>
    server.onGatheringStateChange((state) => state === 'complete' && resolve(server.localDescription()!.sdp)),
  );
  server.setRemoteDescription(offer, 'offer');
  await viewer.setRemoteDescription({ type: 'answer', sdp: await answered });
  await open;
  return {
    out: new OutgoingTrack(track, 'viewer', [{ stream, rtx }]),
    receiver: receiving.receiver,
    received,
  };
}

const packet = (sequenceNumber: number, timestamp: number, first: number) =>
  new RtpPacket(
    new RtpHeader({ payloadType: 100, sequenceNumber, timestamp, ssrc: 42, marker: true }),
    Buffer.from([first, sequenceNumber & 0xff, 0xaa, 0xbb]),
  );

const until = async (done: () => boolean) => {
  for (let wait = 0; wait < 100 && !done(); wait++) await new Promise((resolve) => setTimeout(resolve, 20));
};

describe('TrackFanout to a werift viewer', () => {
  it('starts a viewer at a keyframe, renumbers for it, and answers its NACK over RTX', async () => {
    const { out, receiver, received } = await connectedPair();
    let keyframeRequests = 0;
    const fanout = new TrackFanout(90_000, h264KeyframeStart, () => void keyframeRequests++);
    sendTo(out, [fanout]);
    // A P slice first (skipped: the viewer waits for a keyframe), then an SPS and two slices.
    fanout.forward(packet(1000, 1, 0x41));
    fanout.forward(packet(1001, 2, 0x67));
    fanout.forward(packet(1002, 2, 0x65));
    fanout.forward(packet(1003, 3, 0x41));
    await until(() => received.length === 3);
    expect(received.map((p) => p.payload[0])).toEqual([0x67, 0x65, 0x41]);
    expect(received.map((p) => p.header.ssrc)).toEqual([STREAM.ssrc, STREAM.ssrc, STREAM.ssrc]);
    const [first] = received;
    expect(received.map((p) => p.header.sequenceNumber)).toEqual(
      [0, 1, 2].map((offset) => (first!.header.sequenceNumber + offset) & 0xffff),
    );
    expect(received[1]!.payload).toEqual(packet(1002, 2, 0x65).payload);

    const lost = received[1]!.header.sequenceNumber;
    await receiver.dtlsTransport.sendRtcp([
      new RtcpTransportLayerFeedback({
        feedback: new GenericNack({ senderSsrc: 1, mediaSourceSsrc: STREAM.ssrc, lost: [lost] }),
      }),
    ]);
    await until(() => received.length === 4);
    expect(received[3]!.header.sequenceNumber).toBe(lost);
    expect(received[3]!.payload).toEqual(packet(1002, 2, 0x65).payload);
    // It came in the RTX stream: werift's receiver keeps statistics per SSRC received.
    const streams = (receiver as unknown as { remoteStreams: Record<number, unknown> }).remoteStreams;
    expect(streams[RTX.ssrc]).toBeDefined();

    // The viewer's decoder lost a picture: its PLI asks the publisher for a keyframe.
    const asked = keyframeRequests;
    await receiver.dtlsTransport.sendRtcp([
      new RtcpPayloadSpecificFeedback({
        feedback: new PictureLossIndication({ senderSsrc: 1, mediaSsrc: STREAM.ssrc }),
      }),
    ]);
    await until(() => keyframeRequests > asked);
    expect(keyframeRequests).toBe(asked + 1);
  });
});
