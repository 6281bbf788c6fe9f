/**
 * Hand-built fragmented MP4 for unit tests, shaped as ffmpeg's mp4 muxer writes it
 * (`empty_moov`, `default_base_moof`): a video track (15360 Hz) and an audio track (48 kHz).
 */

function box(type: string, ...payload: Buffer[]): Buffer {
  const body = Buffer.concat(payload);
  const head = Buffer.alloc(8);
  head.writeUInt32BE(8 + body.length, 0);
  head.write(type, 4, 'latin1');
  return Buffer.concat([head, body]);
}

function words(...values: number[]): Buffer {
  const bytes = Buffer.alloc(values.length * 4);
  values.forEach((value, i) => bytes.writeUInt32BE(value >>> 0, i * 4));
  return bytes;
}

function trak(id: number, timescale: number, handler: string): Buffer {
  // tkhd v0: flags, creation, modification, track id; mdhd v0: flags, times, timescale.
  const tkhd = box('tkhd', words(3, 0, 0, id, 0, 0, 0));
  const mdhd = box('mdhd', words(0, 0, 0, timescale, 0, 0));
  const hdlr = box('hdlr', words(0, 0), Buffer.from(handler, 'latin1'), words(0, 0, 0), Buffer.from('x\0'));
  return box('trak', tkhd, box('mdia', mdhd, hdlr));
}

export function init(): Buffer {
  return Buffer.concat([
    box('ftyp', Buffer.from('isom'), words(512), Buffer.from('isomiso6')),
    box('moov', box('mvhd', words(0, 0, 0, 1000, 0)), trak(1, 15360, 'vide'), trak(2, 48000, 'soun')),
  ]);
}

const NON_SYNC = 0x10000;

/**
 * One fragment: video samples of the given durations (trun with durations, sizes and first
 * sample flags, as ffmpeg writes them), and audio (default durations in tfhd) over the same time.
 */
export function fragment(options: { startTime: number; durations: number[]; sync: boolean }): Buffer {
  const { startTime, durations, sync } = options;
  const videoTrun = box(
    'trun',
    words(0x000305, durations.length, 0, sync ? 0 : NON_SYNC),
    ...durations.map((duration) => words(duration, 100)),
  );
  const video = box(
    'traf',
    // tfhd: default-base-is-moof (0x020000) and default sample flags (0x20): non-sync.
    box('tfhd', words(0x020020, 1, NON_SYNC)),
    box('tfdt', words(0, startTime)),
    videoTrun,
  );
  const seconds = durations.reduce((sum, duration) => sum + duration, 0) / 15360;
  const audioFrames = Math.round((seconds * 48000) / 1024);
  const audio = box(
    'traf',
    // tfhd: default sample duration (0x8) 1024 and default flags (0x20): sync.
    box('tfhd', words(0x020028, 2, 1024, 0)),
    box('tfdt', words(0, Math.round((startTime / 15360) * 48000))),
    box('trun', words(0x000201, audioFrames, 0), ...Array.from({ length: audioFrames }, () => words(10))),
  );
  const mdat = box('mdat', Buffer.alloc(durations.length * 100 + audioFrames * 10));
  return Buffer.concat([box('moof', box('mfhd', words(0, 1)), video, audio), mdat]);
}
