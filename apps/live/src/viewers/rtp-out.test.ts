import { randomBytes } from 'node:crypto';
import {
  ProtectionProfileAeadAes128Gcm,
  ProtectionProfileAes128CmHmacSha1_80,
  RtpHeader,
  RtpPacket,
  SrtpSession,
} from 'werift';
import { describe, expect, it } from 'vitest';
import { ForwardedPacket, protect, rtxPacket, viewerHeader } from './rtp-out.ts';

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
  it("patches a viewer's SSRC, payload type and sequence number into a copy of the header only", () => {
    const original = publisherPacket();
    const packet = new ForwardedPacket(original);
    const header = viewerHeader(packet, viewer, 7);
    const sent = RtpPacket.deSerialize(Buffer.concat([header, packet.bytes.subarray(packet.headerSize)]));
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
    const { header, payload } = rtxPacket(packet, 4242, { ssrc: 0x0102_0304, payloadType: 97 }, 9);
    const sent = RtpPacket.deSerialize(Buffer.concat([header, payload]));
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

  for (const [name, profile] of [
    ['AES-GCM', ProtectionProfileAeadAes128Gcm],
    ['AES-CM with HMAC-SHA1', ProtectionProfileAes128CmHmacSha1_80],
  ] as const) {
    it(`protects packets that the viewer's SRTP session (${name}) decrypts, across a rollover`, () => {
      const [key, salt, otherKey, otherSalt] = [
        randomBytes(16),
        randomBytes(12),
        randomBytes(16),
        randomBytes(12),
      ];
      const ours = new SrtpSession({
        keys: {
          localMasterKey: key,
          localMasterSalt: salt,
          remoteMasterKey: otherKey,
          remoteMasterSalt: otherSalt,
        },
        profile,
      });
      const theirs = new SrtpSession({
        keys: {
          localMasterKey: otherKey,
          localMasterSalt: otherSalt,
          remoteMasterKey: key,
          remoteMasterSalt: salt,
        },
        profile,
      });
      const original = publisherPacket();
      const packet = new ForwardedPacket(original);
      // 65534, 65535, 0, 1: the last two need the rollover counter advanced on both sides.
      for (let step = 0; step < 4; step++) {
        const sequence = (65_534 + step) & 0xffff;
        const header = viewerHeader(packet, viewer, sequence);
        const decrypted = RtpPacket.deSerialize(
          theirs.decrypt(protect(ours, header, packet.bytes.subarray(packet.headerSize), viewer.ssrc)),
        );
        expect(decrypted.header).toMatchObject({
          ssrc: viewer.ssrc,
          sequenceNumber: sequence,
          payloadType: 96,
        });
        expect(decrypted.payload).toEqual(original.payload);
      }
    });
  }
});
