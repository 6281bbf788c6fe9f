import { afterEach, describe, expect, it, vi } from 'vitest';
import { RtpHeader, RtpPacket } from 'werift';
import { h264KeyframeStart, sendTo, TrackFanout, vp8KeyframeStart } from './fanout.ts';
import type { OutgoingTrack, SenderReport, StreamFeedback } from './rtp-out.ts';

describe('keyframe starts', () => {
  it('starts H.264 at the SPS, alone or first in a STAP-A, not at a slice', () => {
    expect(h264KeyframeStart(Buffer.from([0x67, 0x42, 0xe0, 0x1f]))).toBe(true);
    // STAP-A: size 4, SPS; size 2, PPS.
    expect(h264KeyframeStart(Buffer.from([0x78, 0, 4, 0x67, 0x42, 0xe0, 0x1f, 0, 2, 0x68, 0xce]))).toBe(true);
    // An IDR slice without its parameter sets, its FU-A start, and a P slice.
    expect(h264KeyframeStart(Buffer.from([0x65, 0x88]))).toBe(false);
    expect(h264KeyframeStart(Buffer.from([0x7c, 0x85, 0x88]))).toBe(false);
    expect(h264KeyframeStart(Buffer.from([0x41, 0x9a]))).toBe(false);
  });

  it("starts VP8 at a keyframe's first packet only", () => {
    // Descriptor: X=1, S=1, PID 0; I=1 with a 15-bit picture id; then the payload header.
    const keyframe = Buffer.from([0x90, 0x80, 0x80, 0x01, 0x10, 0x02, 0x00]);
    const interframe = Buffer.from([0x90, 0x80, 0x80, 0x02, 0x11, 0x02, 0x00]);
    const continuation = Buffer.from([0x80, 0x80, 0x80, 0x01, 0x10]);
    expect(vp8KeyframeStart(keyframe)).toBe(true);
    expect(vp8KeyframeStart(interframe)).toBe(false);
    expect(vp8KeyframeStart(continuation)).toBe(false);
  });
});

/** A viewer's track that records what it is sent: [payload's first byte, payload's second, sequence]. */
function recordingTrack(lower?: OutgoingTrack['lower']) {
  const sent: [number, number, number][] = [];
  const payloadTypes: number[] = [];
  const reports: SenderReport[] = [];
  const track = {
    open: true,
    stream: { ssrc: 7, payloadType: 102 },
    rtx: undefined,
    lower,
    feedback: undefined as StreamFeedback | undefined,
    nextRtxSequence: () => 0,
    send: (bytes: Buffer) => {
      sent.push([bytes[12]!, bytes[13]!, bytes.readUInt16BE(2)]);
      payloadTypes.push(bytes[1]! & 0x7f);
    },
    report: (report: SenderReport) => void reports.push(report),
  };
  return { track, out: track as unknown as OutgoingTrack, sent, payloadTypes, reports };
}

/** One H.264 packet of a rung: `tag` in its second byte tells the rung's packets apart. */
const h264 = (sequenceNumber: number, timestamp: number, nalType: number, tag: number) =>
  new RtpPacket(
    new RtpHeader({ payloadType: 96, sequenceNumber, timestamp, ssrc: 1, marker: true }),
    Buffer.from([nalType, tag]),
  );

/** Two rungs, each forwarding a keyframe (SPS, IDR) or a P slice per frame on its own numbering. */
function ladder() {
  const watched: boolean[][] = [[], []];
  const rungs = [0, 1].map(
    (rung) =>
      new TrackFanout(
        90_000,
        h264KeyframeStart,
        () => {},
        (now) => watched[rung]!.push(now),
      ),
  );
  const sequences = [100, 5000];
  const frame = (rung: number, timestamp: number, keyframe: boolean) => {
    const units = keyframe ? [0x67, 0x65] : [0x41];
    for (const nal of units) rungs[rung]!.forward(h264(sequences[rung]!++, timestamp, nal, 0xa0 + rung));
  };
  return { rungs, frame, watched };
}

describe('a viewer on the rungs of a ladder', () => {
  let now = 0;
  afterEach(() => vi.restoreAllMocks());
  const at = (ms: number) => {
    now = ms;
    vi.spyOn(performance, 'now').mockImplementation(() => now);
  };
  /** At time 0, a viewer sent the two rungs of ladder(). */
  const viewerOnLadder = () => {
    at(0);
    const { frame, rungs, watched } = ladder();
    const { track, out, sent, reports } = recordingTrack();
    sendTo(out, rungs);
    return { frame, watched, track, sent, reports };
  };

  it("starts on the first rung at a keyframe, and moves down at the lower one's keyframe when losing packets", () => {
    const { frame, watched, track, sent } = viewerOnLadder();
    frame(0, 0, false);
    frame(0, 3000, true);
    frame(1, 3000, false);
    expect(sent.map(([, tag]) => tag)).toEqual([0xa0, 0xa0]);
    expect(watched).toEqual([[true], []]);

    // 15 %: on at the first rung until the second's keyframe, then the second's only.
    track.feedback!.fractionLost(0.15);
    expect(watched[1]).toEqual([true]);
    frame(0, 6000, false);
    frame(1, 6000, false);
    frame(1, 9000, true);
    frame(0, 9000, false);
    frame(1, 12000, false);
    expect(sent.map(([, tag]) => tag)).toEqual([0xa0, 0xa0, 0xa0, 0xa1, 0xa1, 0xa1]);
    expect(watched).toEqual([[true, false], [true]]);
    // Numbered without a gap across the move.
    const numbers = sent.map(([, , sequence]) => sequence);
    expect(numbers).toEqual(numbers.map((_, i) => (numbers[0]! + i) & 0xffff));
  });

  it("stops at once when losing more than a quarter, and starts again at the lower rung's keyframe", () => {
    const { frame, track, sent } = viewerOnLadder();
    frame(0, 0, true);
    track.feedback!.fractionLost(0.4);
    frame(0, 3000, false);
    frame(1, 3000, false);
    expect(sent).toHaveLength(2);
    frame(1, 6000, true);
    expect(sent.map(([first, tag]) => [first, tag])).toEqual([
      [0x67, 0xa0],
      [0x65, 0xa0],
      [0x67, 0xa1],
      [0x65, 0xa1],
    ]);
  });

  it('moves up after ten seconds of clean reports, and waits twice as long after a failed try', () => {
    const { frame, track, sent } = viewerOnLadder();
    frame(0, 0, true);
    track.feedback!.fractionLost(0.5);
    frame(1, 3000, true);
    const tags = () => sent.map(([, tag]) => tag);
    const report = (ms: number, share: number) => {
      at(ms);
      track.feedback!.fractionLost(share);
    };
    report(1_000, 0);
    report(10_999, 0.01);
    frame(0, 6000, true);
    frame(0, 7500, false);
    expect(tags().at(-1)).toBe(0xa1);
    // Ten seconds clean: up at the first rung's next keyframe, on the lower one until then.
    report(11_000, 0);
    frame(1, 6000, false);
    frame(0, 9000, true);
    expect(tags().slice(-3)).toEqual([0xa1, 0xa0, 0xa0]);
    // Too much for the link: down again, and the next try waits 20 s.
    report(13_000, 0.2);
    frame(1, 12000, true);
    expect(tags().at(-1)).toBe(0xa1);
    frame(1, 13500, false);
    report(14_000, 0);
    report(24_000, 0);
    frame(0, 15000, true);
    frame(1, 15000, false);
    expect(tags().at(-1)).toBe(0xa1);
    report(34_000, 0);
    frame(0, 18000, true);
    expect(tags().at(-1)).toBe(0xa0);
  });

  it('counts the packets a viewer NACKs, each once, as lost', () => {
    const { frame, track, sent } = viewerOnLadder();
    frame(0, 0, true);
    for (let i = 1; i <= 8; i++) frame(0, i * 3000, false);
    const first = sent[0]![2];
    // One packet of ten asked for five times: 10 %, not more.
    for (let i = 0; i < 5; i++) track.feedback!.nack([first!]);
    track.feedback!.fractionLost(0);
    frame(1, 27000, true);
    frame(1, 28500, false);
    expect(sent.at(-1)![1]).toBe(0xa0);
    // Two of ten: the lower rung at its next keyframe, the first rung until then.
    for (let i = 0; i < 10; i++) frame(0, 30000 + i * 3000, false);
    track.feedback!.nack(sent.slice(-2).map(([, , sequence]) => sequence));
    track.feedback!.fractionLost(0);
    frame(0, 60000, false);
    expect(sent.at(-1)![1]).toBe(0xa0);
    frame(1, 60000, true);
    expect(sent.at(-1)![1]).toBe(0xa1);
  });

  it("reports the stream's RTP time by the first rung's clock, on a lower rung too", () => {
    const { frame, track, sent, reports } = viewerOnLadder();
    const wall = (ms: number) => vi.spyOn(Date, 'now').mockReturnValue(ms);
    // The first rung's frames arrive as they are made (at 90 ticks a millisecond), the lower
    // rung's of the same instants 400 ms later: its encode's delay.
    wall(10_000);
    frame(0, 900_000, true);
    track.feedback!.fractionLost(0.15);
    wall(10_400);
    frame(1, 900_000, true);
    for (let ms = 10_040; sent.length < 16; ms += 40) {
      wall(ms);
      frame(0, ms * 90, false);
      wall(ms + 400);
      frame(1, ms * 90, false);
    }
    expect(sent.at(-1)![1]).toBe(0xa1);
    // The 16th packet, sent on the lower rung at 10,880: the RTP time of that instant, not that
    // of the rung's picture sent then (made at 10,480).
    expect(reports).toEqual([{ at: 10_880, rtpTimestamp: 10_880 * 90, packets: 16, octets: 32 }]);
  });

  it("sends the rungs below in their own codec's payload type, and resends each packet as it went", () => {
    at(0);
    const { frame, rungs } = ladder();
    const lower = { stream: { ssrc: 7, payloadType: 106 }, rtx: { ssrc: 8, payloadType: 107 } };
    const { track, out, sent, payloadTypes } = recordingTrack(lower);
    sendTo(out, rungs);
    frame(0, 0, true);
    track.feedback!.fractionLost(0.15);
    frame(1, 3000, true);
    frame(1, 6000, false);
    expect(payloadTypes).toEqual([102, 102, 106, 106, 106]);
    // A packet of each rung asked for again: the first rung's as sent (no RTX negotiated for its
    // codec), the lower one's over its codec's RTX.
    track.feedback!.nack([sent[0]![2], sent[4]![2]]);
    expect(payloadTypes.slice(5)).toEqual([102, 107]);
  });

  it('stays on a single rung when losing packets, stopping only past a quarter', () => {
    at(0);
    const fanout = new TrackFanout(90_000, h264KeyframeStart, () => {});
    const { track, out, sent } = recordingTrack();
    const end = sendTo(out, [fanout]);
    fanout.forward(h264(1, 0, 0x67, 0));
    track.feedback!.fractionLost(0.2);
    fanout.forward(h264(2, 3000, 0x41, 0));
    fanout.forward(h264(3, 6000, 0x67, 0));
    expect(sent).toHaveLength(3);
    track.feedback!.fractionLost(0.3);
    fanout.forward(h264(4, 9000, 0x41, 0));
    fanout.forward(h264(5, 12000, 0x67, 0));
    expect(sent.map(([first]) => first)).toEqual([0x67, 0x41, 0x67, 0x67]);
    end();
    fanout.forward(h264(6, 15000, 0x41, 0));
    expect(sent).toHaveLength(4);
  });
});
