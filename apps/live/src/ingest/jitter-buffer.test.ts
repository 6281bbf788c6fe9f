// werift's jitter buffer as the WebRTC ingest runs it (in front of the depacketizer feeding the
// ladder's ffmpeg), with the fix in patches/werift+0.24.4.patch: releasing buffered packets
// walked up the sequence numbers from the last one released, reading the whole buffer at each,
// and a packet left behind that number made the walk go round all 65,536. Under loss that took
// the live process's one thread (the LL-HLS bench's profile), and with it every viewer.
import fc from 'fast-check';
import { RtpHeader, RtpPacket } from 'werift';
import { JitterBufferCallback } from 'werift/nonstandard';
import { describe, expect, it, vi } from 'vitest';

const packet = (sequenceNumber: number, timestamp = 0) =>
  new RtpPacket(new RtpHeader({ sequenceNumber, timestamp, payloadType: 96 }), Buffer.alloc(1));

/** The private parts of werift's jitter buffer the fix is in. */
interface Releasing {
  presentSeqNum: number;
  sortAndClearBuffer(buffer: Record<number, RtpPacket>): RtpPacket[];
}

/** A jitter buffer whose last released number is `present`. */
function releasingFrom(present: number): Releasing {
  const jitter = new JitterBufferCallback(90000) as unknown as Releasing;
  jitter.presentSeqNum = present;
  return jitter;
}

/** The release order werift 0.24 walked to: up from `from`, round past 65,535 to 0. */
function walked(from: number, numbers: number[]): number[] {
  return [...numbers].sort((a, b) => ((a - from) & 0xffff) - ((b - from) & 0xffff));
}

describe('the jitter buffer (patched)', () => {
  it('releases buffered packets in the order the walk up the sequence numbers gave, emptying the buffer', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 0xffff }),
        fc.uniqueArray(fc.integer({ min: 0, max: 0xffff }), { maxLength: 300 }),
        (present, numbers) => {
          const jitter = releasingFrom(present);
          const buffer: Record<number, RtpPacket> = {};
          for (const number of numbers) buffer[number] = packet(number);
          const released = jitter.sortAndClearBuffer(buffer).map((rtp) => rtp.header.sequenceNumber);
          expect(released).toEqual(walked(present, numbers));
          expect(Object.keys(buffer)).toEqual([]);
        },
      ),
    );
  });

  it('releases a packet left behind the last one released without going round every sequence number', () => {
    const jitter = releasingFrom(500);
    const buffer: Record<number, RtpPacket> = { 499: packet(499), 501: packet(501) };
    // werift 0.24 read the whole buffer once per sequence number it walked: 65,535 times here.
    const reads = vi.spyOn(Object, 'values');
    try {
      expect(jitter.sortAndClearBuffer(buffer).map((rtp) => rtp.header.sequenceNumber)).toEqual([501, 499]);
      expect(reads.mock.calls.length).toBeLessThanOrEqual(1);
    } finally {
      reads.mockRestore();
    }
  });

  it('passes packets on in order across a loss and the sequence numbers wrapping', () => {
    const jitter = new JitterBufferCallback(90000, { latency: 100 });
    const out: number[] = [];
    jitter.pipe((output) => {
      if (output.rtp) out.push(output.rtp.header.sequenceNumber);
    });
    // 65,530 to 5, 33 ms apart, with 65,533 lost: the packets after it wait until 100 ms old.
    const sent = Array.from({ length: 12 }, (_, i) => (65_530 + i) & 0xffff).filter((n) => n !== 65_533);
    sent.forEach((number, i) => jitter.input({ rtp: packet(number, i * 3_000) }));
    expect(out.slice(0, 3)).toEqual([65_530, 65_531, 65_532]);
    const after = out.slice(3);
    expect(after.length).toBeGreaterThan(0);
    expect(after).toEqual(walked(65_534, after));
  });
});
