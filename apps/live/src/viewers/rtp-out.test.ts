import { randomBytes } from 'node:crypto';
import type { RtcpSourceDescriptionPacket } from 'werift';
import {
  GenericNack,
  PictureLossIndication,
  RtcpPayloadSpecificFeedback,
  RtcpReceiverInfo,
  RtcpPacketConverter,
  RtcpRrPacket,
  RtcpSrPacket,
  RtcpTransportLayerFeedback,
  RtpHeader,
  RtpPacket,
} from 'werift';
import { describe, expect, it, vi } from 'vitest';
import { ForwardedPacket, readFeedback, rtcpBye, rtxPacket, senderReport, viewerPacket } from './rtp-out.ts';

/** A publisher's packet as werift hands it over: marker set, a CSRC, an extension, padding. */
function publisherPacket(payload = randomBytes(1100)): RtpPacket {
  return new RtpPacket(
    new RtpHeader({
      marker: true,
      payloadType: 102,
      sequenceNumber: 65_530,
      timestamp: 0xfedc_ba98,
      ssrc: 0x1111_1111,
      csrc: [0x2222_2222],
      csrcLength: 1,
      extension: true,
      extensions: [{ id: 3, payload: Buffer.from([1, 2, 3]) }],
      padding: true,
      paddingSize: 4,
    }),
    payload,
  );
}

const viewer = { ssrc: 0xabcd_ef01, payloadType: 96 };

describe('packets for viewers', () => {
  it("patches a viewer's SSRC, payload type and sequence number into a copy of the packet", () => {
    const original = publisherPacket();
    const packet = new ForwardedPacket(original);
    const sent = RtpPacket.deSerialize(viewerPacket(packet, viewer, 7));
    expect(sent.header).toMatchObject({
      ssrc: viewer.ssrc,
      payloadType: 96,
      sequenceNumber: 7,
      marker: true,
      timestamp: 0xfedc_ba98,
      csrc: [0x2222_2222],
      padding: true,
      paddingSize: 4,
    });
    expect(sent.header.extensions).toEqual([{ id: 3, payload: Buffer.from([1, 2, 3]) }]);
    expect(sent.payload).toEqual(original.payload);
    // The shared bytes stay the publisher's for the next viewer.
    expect(RtpPacket.deSerialize(packet.bytes).header).toMatchObject({
      ssrc: 0x1111_1111,
      sequenceNumber: 65_530,
    });
  });

  it('wraps a packet for RTX: its sent sequence number, then its payload without padding', () => {
    const original = publisherPacket();
    const packet = new ForwardedPacket(original);
    const sent = RtpPacket.deSerialize(rtxPacket(packet, 4242, { ssrc: 0x0102_0304, payloadType: 97 }, 9));
    expect(sent.header).toMatchObject({
      ssrc: 0x0102_0304,
      payloadType: 97,
      sequenceNumber: 9,
      marker: true,
      timestamp: 0xfedc_ba98,
      padding: false,
    });
    expect(sent.payload.readUInt16BE(0)).toBe(4242);
    expect(sent.payload.subarray(2)).toEqual(original.payload);
  });

  it("makes each viewer's packet in one buffer, sent before the next is made", () => {
    const packet = new ForwardedPacket(publisherPacket());
    const first = viewerPacket(packet, viewer, 1);
    const second = viewerPacket(packet, { ssrc: 5, payloadType: 97 }, 2);
    expect(second.buffer).toBe(first.buffer);
    expect(RtpPacket.deSerialize(second).header).toMatchObject({
      ssrc: 5,
      payloadType: 97,
      sequenceNumber: 2,
    });
    const large = new ForwardedPacket(new RtpPacket(new RtpHeader(), Buffer.alloc(4_000, 1)));
    expect(RtpPacket.deSerialize(viewerPacket(large, viewer, 3)).payload).toEqual(Buffer.alloc(4_000, 1));
  });
});

describe('feedback from viewers', () => {
  const ours = 0xabcd_ef01;
  const theirs = 0x5555_5555;
  const listener = () => ({ pictureLoss: vi.fn(), nack: vi.fn(), fractionLost: vi.fn() });
  const compound = (...packets: { serialize(): Buffer }[]) =>
    Buffer.concat(packets.map((packet) => packet.serialize()));

  it('reads loss, keyframe requests and NACKs about our stream from a compound packet', () => {
    const feedback = listener();
    readFeedback(
      compound(
        new RtcpRrPacket({
          ssrc: 1,
          reports: [
            new RtcpReceiverInfo({ ssrc: theirs, fractionLost: 255 }),
            new RtcpReceiverInfo({ ssrc: ours, fractionLost: 64 }),
          ],
        }),
        new RtcpPayloadSpecificFeedback({
          feedback: new PictureLossIndication({ senderSsrc: 1, mediaSsrc: ours }),
        }),
        new RtcpTransportLayerFeedback({
          feedback: new GenericNack({ senderSsrc: 1, mediaSourceSsrc: ours, lost: [10, 12] }),
        }),
      ),
      ours,
      feedback,
    );
    expect(feedback.fractionLost).toHaveBeenCalledWith(0.25);
    expect(feedback.pictureLoss).toHaveBeenCalledOnce();
    expect(feedback.nack).toHaveBeenCalledWith([10, 12]);
  });

  it('leaves what is about another stream, and what does not parse', () => {
    const feedback = listener();
    readFeedback(
      compound(
        new RtcpPayloadSpecificFeedback({
          feedback: new PictureLossIndication({ senderSsrc: 1, mediaSsrc: theirs }),
        }),
        new RtcpTransportLayerFeedback({
          feedback: new GenericNack({ senderSsrc: 1, mediaSourceSsrc: theirs, lost: [1] }),
        }),
      ),
      ours,
      feedback,
    );
    readFeedback(Buffer.from([0x81, 201, 0xff, 0xff, 1, 2]), ours, feedback);
    readFeedback(randomBytes(3), ours, feedback);
    expect(feedback.pictureLoss).not.toHaveBeenCalled();
    expect(feedback.nack).not.toHaveBeenCalled();
    expect(feedback.fractionLost).not.toHaveBeenCalled();
  });

  it('says our streams end with a BYE naming each', () => {
    const bye = rtcpBye([ours, theirs]);
    expect(bye.readUInt16BE(2)).toBe(2);
    expect([bye[0]! >> 6, bye[0]! & 0x1f, bye[1]]).toEqual([2, 2, 203]);
    expect([bye.readUInt32BE(4), bye.readUInt32BE(8)]).toEqual([ours, theirs]);
  });

  it('reports a stream as a sender report with its CNAME, in NTP time', () => {
    const [sr, sdes] = RtcpPacketConverter.deSerialize(
      senderReport(7, 'stream', {
        at: Date.UTC(2026, 10, 29, 12, 0, 0, 250),
        rtpTimestamp: 90,
        packets: 3,
        octets: 300,
      }),
    );
    expect(sr).toBeInstanceOf(RtcpSrPacket);
    const { ssrc, senderInfo } = sr as RtcpSrPacket;
    expect({ ssrc, rtpTimestamp: senderInfo.rtpTimestamp, packets: senderInfo.packetCount }).toEqual({
      ssrc: 7,
      rtpTimestamp: 90,
      packets: 3,
    });
    // Seconds since 1900, and a quarter of a second as a 32-bit fraction.
    expect(senderInfo.ntpTimestamp >> 32n).toBe(BigInt(Date.UTC(2026, 10, 29, 12) / 1000 + 2_208_988_800));
    expect(senderInfo.ntpTimestamp & 0xffff_ffffn).toBe(0x4000_0000n);
    expect((sdes as RtcpSourceDescriptionPacket).chunks[0]).toMatchObject({
      source: 7,
      items: [{ type: 1, text: 'stream' }],
    });
  });
});
