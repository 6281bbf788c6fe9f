import * as HLS from 'hls-parser';
import { BoxSplitter, fragmentTracks, initTracks, Mp4Error, type Box, type Track } from './fmp4.ts';
import { Waiters } from './waiters.ts';

/**
 * One rendition's Low-Latency HLS (RFC 8216bis, section 4.4.3 and 6.2.5.2), packaged in memory
 * from ffmpeg's fragmented MP4: the init segment (`ftyp` + `moov`) is EXT-X-MAP `init.mp4`, a
 * part `part{n}.m4s` is the fragments (`moof` + `mdat`, one per frame) of one part target of
 * video (n counts parts across segments, so the preload hint always names the right one), and
 * a segment `seg{msn}.m4s` is the parts from one keyframe to the next (the ladder puts a
 * keyframe at every segment boundary). Every part but a segment's last is a whole part target
 * long (RFC 8216bis asks at least 85 %). Plain HLS clients read the same playlist's segments.
 */

export interface LowLatencyOptions {
  /** The rendition's segment length (EXT-X-TARGETDURATION): segments last this long. */
  targetDuration: number;
  partTarget: number;
  /** EXT-X-START:TIME-OFFSET. */
  startTimeOffset?: number;
  /** Complete segments listed and kept (older ones are forgotten)... */
  windowSegments: number;
  /** ...and fewer while they (and their parts) hold more bytes than this, down to three (RFC 8216bis 6.2.2). */
  windowBytes: number;
}

interface Part {
  /** Counts every part of the stream. */
  index: number;
  /** Seconds (of the video track). */
  duration: number;
  /** Starts with a keyframe: the first part of its segment. */
  independent: boolean;
  bytes: Buffer;
}

interface Segment {
  msn: number;
  parts: Part[];
  /** The parts joined, once the segment is complete. */
  bytes?: Buffer;
}

/** Position of the newest part: segment number and the part's place in that segment. */
export interface Position {
  msn: number;
  part: number;
}

/** Parts are listed for the segments this close to the live edge (RFC 8216bis 6.2.2: three target durations). */
const SEGMENTS_WITH_PARTS = 3;
/** Frame timestamps are rounded to the track's timescale: parts are full within this. */
const PART_SLACK_SECONDS = 0.001;
/** A playlist lists at least this many complete segments, whatever their bytes. */
const MIN_WINDOW_SEGMENTS = 3;

export class LowLatencyRendition {
  private readonly splitter = new BoxSplitter();
  private header: Buffer[] = [];
  private init: Buffer | undefined;
  private track: Track | undefined;
  private moof: Box | undefined;
  /** Fragments of the part being gathered, and the seconds of video they hold. */
  private pending = { fragments: [] as Buffer[], duration: 0, independent: false };
  private segments: Segment[] = [];
  private nextPart = 0;
  private ended = false;
  private text: string | undefined;
  /** The playlist's text as sent, encoded once per change rather than per request. */
  private encoded: Buffer | undefined;
  /** Blocking reloads, by the segment and part they wait for. */
  private readonly reloads = new Waiters<{ msn: number; part: number | undefined }>();
  /** Requests for a part not produced yet, by its index. */
  private readonly partRequests = new Waiters<number>();

  /** Told of every byte pushed, then of the end (null): mirrors of this rendition (viewers/hls-serving.ts). */
  private readonly inputListeners: ((bytes: Buffer | null) => void)[] = [];

  constructor(readonly options: LowLatencyOptions) {}

  /** `listener` gets each chunk pushed from now on, then null at the end. */
  onInput(listener: (bytes: Buffer | null) => void): void {
    this.inputListeners.push(listener);
  }

  /** ffmpeg's next bytes; a stream that is not fMP4 throws Mp4Error (and nothing more is taken). */
  push(chunk: Buffer): void {
    if (this.ended) return;
    for (const listener of this.inputListeners) listener(chunk);
    try {
      for (const box of this.splitter.push(chunk)) this.take(box);
    } catch (error) {
      this.end();
      throw error;
    }
  }

  private take(box: Box): void {
    if (!this.init) {
      this.header.push(box.bytes);
      if (box.type !== 'moov') return;
      const tracks = initTracks(box);
      this.track = tracks.find((track) => track.handler === 'vide') ?? tracks[0];
      if (!this.track) throw new Mp4Error('the init segment has no track');
      this.init = Buffer.concat(this.header);
      this.header = [];
      return;
    }
    if (box.type === 'moof') {
      this.moof = box;
      return;
    }
    if (box.type !== 'mdat' || !this.moof) return;
    const run = fragmentTracks(this.moof).find((track) => track.trackId === this.track!.id);
    const fragment = Buffer.concat([this.moof.bytes, box.bytes]);
    this.moof = undefined;
    this.addFragment(
      fragment,
      run && { duration: run.duration / this.track!.timescale, sync: run.startsWithSync },
    );
  }

  /**
   * ffmpeg writes a fragment per frame (and per audio frame); parts gather them. A keyframe
   * ends the segment at once (so its last part is known to be its last) and starts a part; a
   * part is closed as soon as its video fills the part target, so it is out with its last
   * frame, and never runs past the target.
   */
  private addFragment(bytes: Buffer, video: { duration: number; sync: boolean } | undefined): void {
    const { partTarget } = this.options;
    if (video?.sync) {
      if (this.pending.duration > 0) this.closePart();
      this.endSegment();
    } else if (
      video &&
      this.pending.duration > 0 &&
      this.pending.duration + video.duration > partTarget + PART_SLACK_SECONDS
    ) {
      this.closePart();
    }
    if (video && this.pending.duration === 0) this.pending.independent = video.sync;
    this.pending.fragments.push(bytes);
    this.pending.duration += video?.duration ?? 0;
    if (this.pending.duration >= partTarget - PART_SLACK_SECONDS) this.closePart();
  }

  private closePart(): void {
    const { fragments, duration, independent } = this.pending;
    this.pending = { fragments: [], duration: 0, independent: false };
    if (this.segments.length === 0) this.segments.push({ msn: 0, parts: [] });
    this.segments
      .at(-1)!
      .parts.push({ index: this.nextPart++, duration, independent, bytes: Buffer.concat(fragments) });
    this.changed();
  }

  /** The open segment is complete; the next one opens, empty until its first part. */
  private endSegment(): void {
    const open = this.segments.at(-1);
    if (!open || open.parts.length === 0) return;
    this.complete(open);
    this.segments.push({ msn: open.msn + 1, parts: [] });
    this.trim();
    this.changed();
  }

  private complete(segment: Segment): void {
    segment.bytes = Buffer.concat(segment.parts.map((part) => part.bytes));
  }

  /**
   * Forgets segments beyond the window. A segment's parts stay fetchable as long as it does,
   * listed or not (a client that read a playlist a moment ago may still ask for them): the
   * byte budget counts them too.
   */
  private trim(): void {
    const complete = () => this.segments.length - 1;
    const bytes = () =>
      this.segments.reduce(
        (sum, segment) =>
          sum +
          (segment.bytes?.length ?? 0) +
          segment.parts.reduce((parts, part) => parts + part.bytes.length, 0),
        0,
      );
    while (
      complete() > this.options.windowSegments ||
      (complete() > MIN_WINDOW_SEGMENTS && bytes() > this.options.windowBytes)
    ) {
      this.segments.shift();
    }
  }

  /** The stream ended: the open segment is complete and the playlist says ENDLIST. */
  end(): void {
    if (this.ended) return;
    for (const listener of this.inputListeners) listener(null);
    if (this.pending.duration > 0) this.closePart();
    this.ended = true;
    const open = this.segments.at(-1);
    if (open?.parts.length === 0) this.segments.pop();
    else if (open) this.complete(open);
    this.changed();
  }

  get finished(): boolean {
    return this.ended;
  }

  /** At every new part, segment end and the stream's end. */
  private changed(): void {
    this.text = undefined;
    this.encoded = undefined;
    this.reloads.wakeReached(({ msn, part }) => this.reached(msn, part));
    this.partRequests.wakeReached((index) => this.ended || index < this.nextPart);
  }

  /** Calls `wake` once, when `reached(msn, part)` comes to hold; returns the cancel. */
  whenReached(msn: number, part: number | undefined, wake: () => void): () => void {
    return this.reloads.add(part === undefined ? `${msn}` : `${msn}.${part}`, { msn, part }, wake);
  }

  /** Calls `wake` once, when part `index` is produced or the stream ends; returns the cancel. */
  whenPart(index: number, wake: () => void): () => void {
    return this.partRequests.add(index, index, wake);
  }

  /** The newest part's position (part -1: the open segment has none yet), or undefined before the first. */
  get position(): Position | undefined {
    const open = this.segments.at(-1);
    return open && { msn: open.msn, part: open.parts.length - 1 };
  }

  /**
   * Whether the playlist holds part `part` of segment `msn` or anything later (RFC 8216bis
   * 6.2.5.2), or, without a part, the whole segment `msn`. A part index past a segment's last
   * part means the next segment's first: that is "later" too.
   */
  reached(msn: number, part: number | undefined): boolean {
    if (this.ended) return true;
    const at = this.position;
    if (!at) return false;
    if (part === undefined) return at.msn > msn;
    return at.msn > msn || (at.msn === msn && at.part >= part);
  }

  get initSegment(): Buffer | undefined {
    return this.init;
  }

  /** A complete segment's bytes. */
  segment(msn: number): Buffer | undefined {
    return this.segments.find((segment) => segment.msn === msn)?.bytes;
  }

  part(index: number): Buffer | undefined {
    for (let i = this.segments.length - 1; i >= 0; i--) {
      const found = this.segments[i]!.parts.find((part) => part.index === index);
      if (found) return found.bytes;
    }
    return undefined;
  }

  /** The part the preload hint names: produced next. */
  get hintedPart(): number | undefined {
    return this.ended || !this.init ? undefined : this.nextPart;
  }

  /** The media playlist, or undefined before the first part; written once per change. */
  playlist(): string | undefined {
    if (this.segments.length === 0) return undefined;
    this.text ??= this.write();
    return this.text;
  }

  /** playlist() in UTF-8, shared by every answer until the next change. */
  playlistBytes(): Buffer | undefined {
    if (this.encoded) return this.encoded;
    const text = this.playlist();
    this.encoded = text === undefined ? undefined : Buffer.from(text);
    return this.encoded;
  }

  private write(): string {
    const { targetDuration, partTarget, startTimeOffset } = this.options;
    const map = new HLS.types.MediaInitializationSection({ uri: 'init.mp4' });
    const withParts = this.segments.slice(-SEGMENTS_WITH_PARTS);
    const segments = this.segments.map((segment) => {
      const parts = withParts.includes(segment)
        ? segment.parts.map(
            (part) =>
              new HLS.types.PartialSegment({
                hint: false,
                uri: `part${part.index}.m4s`,
                duration: round(part.duration),
                independent: part.independent,
              }),
          )
        : [];
      // The open segment (always the last) ends with the hint: its EXTINF comes once complete.
      // The hinted part may turn out to start the next segment; its name is right either way.
      if (!segment.bytes && this.hintedPart !== undefined)
        parts.push(new HLS.types.PartialSegment({ hint: true, uri: `part${this.hintedPart}.m4s` }));
      return new HLS.types.Segment({
        uri: `seg${segment.msn}.m4s`,
        duration: round(segment.parts.reduce((sum, part) => sum + part.duration, 0)),
        mediaSequenceNumber: segment.msn,
        map,
        parts,
      });
    });
    return HLS.stringify(
      new HLS.types.MediaPlaylist({
        version: 6,
        independentSegments: true,
        targetDuration,
        mediaSequenceBase: this.segments[0]!.msn,
        lowLatencyCompatibility: {
          canBlockReload: true,
          partHoldBack: round(3 * partTarget),
        } as HLS.types.MediaPlaylist['lowLatencyCompatibility'],
        partTargetDuration: partTarget,
        endlist: this.ended,
        segments,
        ...(startTimeOffset === undefined ? {} : { start: { offset: startTimeOffset, precise: false } }),
      }),
    );
  }
}

/** Durations as written: milliseconds are plenty, and a sum of parts stays exact enough. */
function round(seconds: number): number {
  return Math.round(seconds * 1000) / 1000;
}
