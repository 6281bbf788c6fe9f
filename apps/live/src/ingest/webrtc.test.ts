import { RTCPeerConnection, RtpHeader, RtpPacket } from 'werift';
import { dePacketizeRtpPackets } from 'werift/nonstandard';
import { describe, expect, it } from 'vitest';
import { peerTransport, webmCodecsByPayloadType, withIdrMarked } from './webrtc.ts';

/** One RTP packet carrying SPS, PPS and an IDR slice aggregated (STAP-A, RFC 6184 5.7.1). */
function stapAKeyframe(): RtpPacket {
  const units = [
    Buffer.from([0x67, 0x42, 0xc0, 0x1e]), // SPS
    Buffer.from([0x68, 0xce, 0x3c, 0x80]), // PPS
    Buffer.from([0x65, 0x88, 0x84, 0x00, 0x33]), // IDR slice
  ];
  const payload = Buffer.concat([
    Buffer.from([0x78]), // STAP-A
    ...units.flatMap((unit) => [Buffer.from([0, unit.length]), unit]),
  ]);
  return new RtpPacket(new RtpHeader({ payloadType: 97, marker: true, sequenceNumber: 1 }), payload);
}

describe('H.264 keyframes werift misses', () => {
  it('marks a frame whose IDR slice came aggregated in a STAP-A', () => {
    const depacketized = dePacketizeRtpPackets('MPEG4/ISO/AVC', [stapAKeyframe()]);
    // What this works around: werift looks at the packet's own NAL type (STAP-A) only.
    expect(depacketized.isKeyframe).toBe(false);
    const frame = { data: depacketized.data, isKeyframe: depacketized.isKeyframe };
    expect(withIdrMarked({ frame }).frame.isKeyframe).toBe(true);
  });

  it('leaves other frames as they are', () => {
    const delta = Buffer.from([0, 0, 0, 1, 0x41, 0x9a, 0x02]);
    const input = { frame: { data: delta, isKeyframe: false } };
    expect(withIdrMarked(input)).toBe(input);
  });
});

describe('the video codecs of an answer', () => {
  it('maps every H.264 and VP8 payload type, whatever their order', () => {
    const answer = [
      'v=0',
      'm=audio 9 UDP/TLS/RTP/SAVPF 111',
      'a=rtpmap:111 opus/48000/2',
      'm=video 9 UDP/TLS/RTP/SAVPF 97 98 99',
      'a=rtpmap:97 H264/90000',
      'a=rtpmap:98 VP8/90000',
      'a=rtpmap:99 rtx/90000',
      '',
    ].join('\r\n');
    expect([...webmCodecsByPayloadType(answer)]).toEqual([
      [97, 'MPEG4/ISO/AVC'],
      [98, 'VP8'],
    ]);
  });
});

describe('our peer connections', () => {
  it('ask no STUN server (werift fell back to the Google one, patched out)', async () => {
    const pc = new RTCPeerConnection(peerTransport({ additionalHostAddresses: [] }));
    try {
      pc.addTransceiver('video', { direction: 'sendonly' });
      await pc.setLocalDescription(await pc.createOffer());
      const connection = pc.dtlsTransports[0]!.iceTransport.connection as unknown as { stunServer?: unknown };
      expect(connection.stunServer).toBeUndefined();
      expect(pc.localDescription!.sdp).toContain('typ host');
      expect(pc.localDescription!.sdp).not.toContain('typ srflx');
    } finally {
      await pc.close();
    }
  });
});
