/**
 * The little of fragmented MP4 (ISO/IEC 14496-12) that LL-HLS packaging needs: ffmpeg's fMP4
 * byte stream cut into top-level boxes, the tracks' timescales from the init segment's `moov`,
 * and each fragment's (`moof`) start time, duration and whether it starts on a sync sample.
 * Everything else passes through untouched.
 */

export interface Box {
  type: string;
  /** The whole box, header included. */
  bytes: Buffer;
}

/** Larger top-level boxes are taken for garbage (a 0.5 s fragment of a 4K rendition is far smaller). */
const MAX_BOX_BYTES = 64 * 1024 * 1024;

export class Mp4Error extends Error {}

/**
 * Cuts a byte stream into top-level boxes as they complete. A box announcing a size it cannot
 * have (below its header, beyond MAX_BOX_BYTES, or "to the end of the file") is an error: the
 * stream is not fMP4 and nothing after it can be trusted.
 */
export class BoxSplitter {
  private pending: Buffer[] = [];
  private pendingBytes = 0;

  push(chunk: Buffer): Box[] {
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    const boxes: Box[] = [];
    for (;;) {
      const size = this.nextSize();
      if (size === undefined || this.pendingBytes < size) break;
      const all = this.pending.length === 1 ? this.pending[0]! : Buffer.concat(this.pending);
      boxes.push({ type: all.toString('latin1', 4, 8), bytes: all.subarray(0, size) });
      const rest = all.subarray(size);
      this.pending = rest.length > 0 ? [rest] : [];
      this.pendingBytes = rest.length;
    }
    return boxes;
  }

  /** Bytes received that do not yet make a whole box (a stream ending here was cut short). */
  get buffered(): number {
    return this.pendingBytes;
  }

  private nextSize(): number | undefined {
    if (this.pendingBytes < 16) {
      if (this.pendingBytes < 8) return undefined;
      // A 64-bit size needs 16 header bytes; a 32-bit one is known at 8.
      if (this.head(8).readUInt32BE(0) === 1) return undefined;
    }
    const head = this.head(Math.min(16, this.pendingBytes));
    const small = head.readUInt32BE(0);
    const size = small === 1 ? Number(head.readBigUInt64BE(8)) : small;
    const headerBytes = small === 1 ? 16 : 8;
    if (small === 0) throw new Mp4Error('a box running to the end of the stream cannot be streamed');
    if (size < headerBytes || size > MAX_BOX_BYTES)
      throw new Mp4Error(`box "${head.toString('latin1', 4, 8)}" announces an impossible size ${size}`);
    return size;
  }

  private head(bytes: number): Buffer {
    if (this.pending[0]!.length < bytes) this.pending = [Buffer.concat(this.pending)];
    return this.pending[0]!.subarray(0, bytes);
  }
}

/** The child boxes of a container box's payload. */
function children(payload: Buffer): Map<string, Buffer[]> {
  const found = new Map<string, Buffer[]>();
  let offset = 0;
  while (offset + 8 <= payload.length) {
    const size = payload.readUInt32BE(offset);
    if (size < 8 || offset + size > payload.length) throw new Mp4Error('a child box overruns its parent');
    const type = payload.toString('latin1', offset + 4, offset + 8);
    const list = found.get(type) ?? [];
    list.push(payload.subarray(offset + 8, offset + size));
    found.set(type, list);
    offset += size;
  }
  return found;
}

function child(payload: Buffer, ...path: string[]): Buffer {
  let current = payload;
  for (const type of path) {
    const next = children(current).get(type)?.[0];
    if (!next) throw new Mp4Error(`no ${type} box`);
    current = next;
  }
  return current;
}

function need(payload: Buffer, bytes: number, what: string): void {
  if (payload.length < bytes) throw new Mp4Error(`${what} box is cut short`);
}

export interface Track {
  id: number;
  timescale: number;
  /** `vide`, `soun`... */
  handler: string;
}

/** The tracks an init segment's `moov` declares. */
export function initTracks(moov: Box): Track[] {
  return (children(moov.bytes.subarray(8)).get('trak') ?? []).map((trak) => {
    const tkhd = child(trak, 'tkhd');
    need(tkhd, 24, 'tkhd');
    const mdhd = child(trak, 'mdia', 'mdhd');
    need(mdhd, 24, 'mdhd');
    const hdlr = child(trak, 'mdia', 'hdlr');
    need(hdlr, 12, 'hdlr');
    // Full boxes: version 1 has 64-bit creation and modification times before the fields read.
    const wide = (box: Buffer) => box[0] === 1;
    return {
      id: tkhd.readUInt32BE(wide(tkhd) ? 20 : 12),
      timescale: mdhd.readUInt32BE(wide(mdhd) ? 20 : 12),
      handler: hdlr.toString('latin1', 8, 12),
    };
  });
}

export interface FragmentTrack {
  trackId: number;
  /** tfdt: the first sample's decode time, in the track's timescale. */
  startTime: number;
  /** The samples' durations summed, in the track's timescale. */
  duration: number;
  /** The first sample is a sync sample (a keyframe for video). */
  startsWithSync: boolean;
}

const TFHD_BASE_DATA_OFFSET = 0x1;
const TFHD_SAMPLE_DESCRIPTION = 0x2;
const TFHD_DEFAULT_DURATION = 0x8;
const TFHD_DEFAULT_SIZE = 0x10;
const TFHD_DEFAULT_FLAGS = 0x20;
const TRUN_DATA_OFFSET = 0x1;
const TRUN_FIRST_SAMPLE_FLAGS = 0x4;
const TRUN_DURATION = 0x100;
const TRUN_SIZE = 0x200;
const TRUN_FLAGS = 0x400;
const TRUN_COMPOSITION_OFFSET = 0x800;
/** sample_is_non_sync_sample in a sample's flags. */
const NON_SYNC = 0x10000;

/** Each track's run in a fragment's `moof`. */
export function fragmentTracks(moof: Box): FragmentTrack[] {
  return (children(moof.bytes.subarray(8)).get('traf') ?? []).map((traf) => {
    const tfhd = child(traf, 'tfhd');
    need(tfhd, 8, 'tfhd');
    const tfhdFlags = tfhd.readUInt32BE(0) & 0xffffff;
    let offset = 8;
    if (tfhdFlags & TFHD_BASE_DATA_OFFSET) offset += 8;
    if (tfhdFlags & TFHD_SAMPLE_DESCRIPTION) offset += 4;
    const optional = [TFHD_DEFAULT_DURATION, TFHD_DEFAULT_SIZE, TFHD_DEFAULT_FLAGS].filter(
      (flag) => tfhdFlags & flag,
    );
    need(tfhd, offset + optional.length * 4, 'tfhd');
    const field = (flag: number) =>
      tfhdFlags & flag ? tfhd.readUInt32BE(offset + optional.indexOf(flag) * 4) : 0;
    const defaultDuration = field(TFHD_DEFAULT_DURATION);
    const defaultFlags = field(TFHD_DEFAULT_FLAGS);

    const tfdt = child(traf, 'tfdt');
    need(tfdt, 8, 'tfdt');
    const startTime =
      tfdt[0] === 1 ? (need(tfdt, 12, 'tfdt'), Number(tfdt.readBigUInt64BE(4))) : tfdt.readUInt32BE(4);

    let duration = 0;
    let firstFlags: number | undefined;
    for (const trun of children(traf).get('trun') ?? []) {
      need(trun, 8, 'trun');
      const flags = trun.readUInt32BE(0) & 0xffffff;
      const count = trun.readUInt32BE(4);
      let at = flags & TRUN_DATA_OFFSET ? 12 : 8;
      let firstSampleFlags: number | undefined;
      if (flags & TRUN_FIRST_SAMPLE_FLAGS) {
        need(trun, at + 4, 'trun');
        firstSampleFlags = trun.readUInt32BE(at);
        at += 4;
      }
      const fields = [TRUN_DURATION, TRUN_SIZE, TRUN_FLAGS, TRUN_COMPOSITION_OFFSET].filter(
        (field) => flags & field,
      );
      need(trun, at + count * fields.length * 4, 'trun');
      const flagsAt = flags & TRUN_FLAGS ? fields.indexOf(TRUN_FLAGS) * 4 : undefined;
      for (let sample = 0; sample < count; sample++, at += fields.length * 4) {
        duration += flags & TRUN_DURATION ? trun.readUInt32BE(at) : defaultDuration;
        if (sample === 0 && firstFlags === undefined)
          firstFlags =
            firstSampleFlags ?? (flagsAt === undefined ? defaultFlags : trun.readUInt32BE(at + flagsAt));
      }
    }
    return {
      trackId: tfhd.readUInt32BE(4),
      startTime,
      duration,
      startsWithSync: ((firstFlags ?? defaultFlags) & NON_SYNC) === 0,
    };
  });
}
