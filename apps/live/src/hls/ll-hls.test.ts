import * as HLS from 'hls-parser';
import { describe, expect, it } from 'vitest';
import { fragment, init } from '../testing/fmp4.ts';
import { Mp4Error } from './fmp4.ts';
import { LowLatencyRendition } from './ll-hls.ts';

/** 30 fps at 15360 Hz: a frame is 512 ticks; a part of six frames is 0.2 s, a segment 30 frames. */
const FRAME = 512;

function rendition(options: Partial<ConstructorParameters<typeof LowLatencyRendition>[0]> = {}) {
  return new LowLatencyRendition({
    targetDuration: 1,
    partTarget: 0.2,
    windowSegments: 6,
    windowBytes: 1024 * 1024,
    ...options,
  });
}

/** `parts` parts' worth of frames, a fragment each as ffmpeg writes them, a keyframe every second. */
function feed(packager: LowLatencyRendition, parts: number, firstPart = 0): void {
  for (let frame = firstPart * 6; frame < (firstPart + parts) * 6; frame++) {
    packager.push(fragment({ startTime: frame * FRAME, durations: [FRAME], sync: frame % 30 === 0 }));
  }
}

function parse(text: string): HLS.types.MediaPlaylist {
  return HLS.parse(text) as HLS.types.MediaPlaylist;
}

describe('LL-HLS rendition', () => {
  it('lists parts, whole segments of their parts, the server control and the preload hint', () => {
    const packager = rendition({ startTimeOffset: -2 });
    expect(packager.playlist()).toBeUndefined();
    packager.push(init());
    expect(packager.initSegment!.subarray(4, 8).toString('latin1')).toBe('ftyp');
    feed(packager, 12);
    const text = packager.playlist()!;
    expect(text).toContain('#EXT-X-TARGETDURATION:1\n');
    expect(text).toContain('#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,PART-HOLD-BACK=0.6\n');
    expect(text).toContain('#EXT-X-PART-INF:PART-TARGET=0.2\n');
    expect(text).toContain('#EXT-X-START:TIME-OFFSET=-2\n');
    expect(text).toContain('#EXT-X-MAP:URI="init.mp4"\n');
    expect(text).toContain('#EXT-X-PART:DURATION=0.2,URI="part10.m4s",INDEPENDENT=YES\n');
    expect(
      text.endsWith(
        '#EXT-X-PART:DURATION=0.2,URI="part11.m4s"\n#EXT-X-PRELOAD-HINT:TYPE=PART,URI="part12.m4s"',
      ),
    ).toBe(true);

    const playlist = parse(text);
    // The open segment (its parts and the hint, no EXTINF yet) is read as a third.
    expect(playlist.segments).toHaveLength(3);
    expect(playlist.segments.slice(0, 2).map((segment) => [segment.uri, segment.duration])).toEqual([
      ['seg0.m4s', 1],
      ['seg1.m4s', 1],
    ]);
    const parts = playlist.segments.flatMap((segment) => segment.parts);
    expect(parts.filter((part) => part.hint).map((part) => part.uri)).toEqual(['part12.m4s']);
    for (const part of parts.filter((listed) => !listed.hint)) expect(part.duration).toBe(0.2);
    // A whole segment is its parts, byte for byte.
    const ofSegment = Array.from({ length: 5 }, (_, i) => packager.part(5 + i)!);
    expect(packager.segment(1)).toEqual(Buffer.concat(ofSegment));
    expect(packager.segment(2)).toBeUndefined();
    expect(packager.position).toEqual({ msn: 2, part: 1 });
    expect(packager.hintedPart).toBe(12);
  });

  it('tells when a blocking reload is satisfied (RFC 8216bis 6.2.5.2)', () => {
    const packager = rendition();
    packager.push(init());
    feed(packager, 7);
    // Newest: part 1 of segment 1.
    expect(packager.reached(1, 1)).toBe(true);
    expect(packager.reached(1, 2)).toBe(false);
    expect(packager.reached(0, undefined)).toBe(true);
    expect(packager.reached(1, undefined)).toBe(false);
    // Part 9 of segment 0 (which has five) means the next segment's first: there already.
    expect(packager.reached(0, 9)).toBe(true);
    // Waiters are woken once, when what they wait for is there; a cancelled one never.
    const woken: string[] = [];
    const wait = (name: string, msn: number, part: number | undefined) =>
      packager.whenReached(msn, part, () => woken.push(`${name} at ${packager.position!.part}`));
    wait('part 2', 1, 2);
    wait('part 2 again', 1, 2);
    wait('part 3', 1, 3);
    wait('segment 1', 1, undefined);
    wait('cancelled', 1, 2)();
    feed(packager, 1, 7);
    expect(woken).toEqual(['part 2 at 2', 'part 2 again at 2']);
    feed(packager, 1, 8);
    expect(woken.slice(2)).toEqual(['part 3 at 3']);
    expect(packager.reached(1, 2)).toBe(true);
    packager.end();
    // The end satisfies every wait.
    expect(woken.slice(3)).toEqual(['segment 1 at 3']);
    expect(packager.reached(9, 0)).toBe(true);
    expect(packager.playlist()).toMatch(/#EXTINF:0\.8,\nseg1\.m4s\n#EXT-X-ENDLIST$/);
    expect(packager.hintedPart).toBeUndefined();
  });

  it('wakes a wait for the hinted part when it is produced, and one for a segment when it completes', () => {
    const packager = rendition();
    packager.push(init());
    feed(packager, 4);
    const woken: string[] = [];
    packager.whenPart(packager.hintedPart!, () => woken.push(`part ${packager.part(4) ? 4 : 'none'}`));
    packager.whenPart(5, () => woken.push('part 5'));
    packager.whenReached(0, undefined, () =>
      woken.push(`segment 0 ${packager.segment(0) ? 'complete' : 'open'}`),
    );
    feed(packager, 1, 4);
    expect(woken).toEqual(['part 4']);
    // Part 5 starts segment 1: its keyframe completes segment 0 before the part is full.
    packager.push(fragment({ startTime: 30 * FRAME, durations: [FRAME], sync: true }));
    expect(woken).toEqual(['part 4', 'segment 0 complete']);
    feed(packager, 1, 5);
    expect(woken).toEqual(['part 4', 'segment 0 complete', 'part 5']);
  });

  it('completes a segment as its next keyframe arrives, before the part it starts is full', () => {
    const packager = rendition();
    packager.push(init());
    feed(packager, 5);
    expect(packager.segment(0)).toBeUndefined();
    packager.push(fragment({ startTime: 30 * FRAME, durations: [FRAME], sync: true }));
    expect(packager.segment(0)).toBeDefined();
    expect(packager.position).toEqual({ msn: 1, part: -1 });
    expect(packager.reached(0, undefined)).toBe(true);
    expect(packager.reached(1, 0)).toBe(false);
    expect(packager.playlist()).toMatch(
      /#EXTINF:1,\nseg0\.m4s\n#EXT-X-PRELOAD-HINT:TYPE=PART,URI="part5\.m4s"$/,
    );
  });

  it('keeps a bounded window: old segments go with their parts, and parts are listed near the edge only', () => {
    const packager = rendition({ windowSegments: 4 });
    packager.push(init());
    feed(packager, 5 * 9 + 1);
    const playlist = parse(packager.playlist()!);
    expect(playlist.mediaSequenceBase).toBe(5);
    expect(playlist.segments.map((segment) => segment.parts.length)).toEqual([0, 0, 5, 5, 2]);
    expect(packager.segment(4)).toBeUndefined();
    expect(packager.segment(5)).toBeDefined();
    // Parts stay fetchable with their segment, listed or not.
    expect(packager.part(24)).toBeUndefined();
    expect(packager.part(25)).toBeDefined();

    // A byte budget shortens the window, down to three complete segments.
    const tight = rendition({ windowBytes: 1 });
    tight.push(init());
    feed(tight, 5 * 9 + 1);
    expect(parse(tight.playlist()!).segments).toHaveLength(4);
  });

  it('closes a part early rather than let it run past the target, and starts one at a keyframe', () => {
    const packager = rendition();
    packager.push(init());
    let at = 0;
    for (const [duration, sync] of [
      [FRAME, true],
      [FRAME, false],
      [FRAME * 5, false],
      [FRAME, false],
      [FRAME, true],
    ] as const) {
      packager.push(fragment({ startTime: at, durations: [duration], sync }));
      at += duration;
    }
    packager.end();
    const playlist = parse(packager.playlist()!);
    expect(
      playlist.segments.map((segment) =>
        segment.parts.map((part) => [part.duration, part.independent ?? false]),
      ),
    ).toEqual([
      [
        [0.067, true],
        [0.2, false],
      ],
      [[0.033, true]],
    ]);
  });

  it('stops at a stream that is not fMP4, or whose boxes are broken inside', () => {
    const packager = rendition();
    packager.push(init());
    feed(packager, 2);
    const junk = Buffer.alloc(16);
    junk.writeUInt32BE(3, 0);
    expect(() => packager.push(junk)).toThrow(Mp4Error);
    expect(packager.finished).toBe(true);
    expect(packager.playlist()).toContain('#EXT-X-ENDLIST');
    // Whole boxes whose insides do not hold together stop it too.
    const broken = rendition();
    broken.push(init());
    const cut = fragment({ startTime: 0, durations: [FRAME], sync: true });
    cut.writeUInt32BE(1_000_000, cut.indexOf('trun') + 8);
    expect(() => broken.push(cut)).toThrow(Mp4Error);
    expect(broken.finished).toBe(true);
  });
});
