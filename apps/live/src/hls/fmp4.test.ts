import { describe, expect, it } from 'vitest';
import { BoxSplitter, fragmentTracks, initTracks, Mp4Error } from './fmp4.ts';
import { fragment, init } from '../testing/fmp4.ts';

describe('fMP4 boxes', () => {
  it('cuts a stream into top-level boxes however it is chunked', () => {
    const stream = Buffer.concat([init(), fragment({ startTime: 0, durations: [512, 512], sync: true })]);
    for (const chunk of [1, 7, 8, 13, stream.length]) {
      const splitter = new BoxSplitter();
      const types: string[] = [];
      for (let at = 0; at < stream.length; at += chunk)
        types.push(...splitter.push(stream.subarray(at, at + chunk)).map((box) => box.type));
      expect(types).toEqual(['ftyp', 'moov', 'moof', 'mdat']);
      expect(splitter.buffered).toBe(0);
    }
  });

  it('reads a box with a 64-bit size, and waits for the rest of a cut box', () => {
    const payload = Buffer.from('0123456789');
    const large = Buffer.alloc(16);
    large.writeUInt32BE(1, 0);
    large.write('mdat', 4, 'latin1');
    large.writeBigUInt64BE(BigInt(16 + payload.length), 8);
    const splitter = new BoxSplitter();
    expect(splitter.push(large.subarray(0, 12))).toEqual([]);
    expect(splitter.push(Buffer.concat([large.subarray(12), payload.subarray(0, 4)]))).toEqual([]);
    expect(splitter.buffered).toBe(20);
    const [box] = splitter.push(payload.subarray(4));
    expect(box!.type).toBe('mdat');
    expect(box!.bytes.length).toBe(26);
  });

  it('refuses garbage: impossible sizes, boxes to the end of the stream', () => {
    const garbage = (size: number) => {
      const head = Buffer.alloc(8);
      head.writeUInt32BE(size, 0);
      head.write('junk', 4, 'latin1');
      return head;
    };
    expect(() => new BoxSplitter().push(garbage(4))).toThrow(Mp4Error);
    expect(() => new BoxSplitter().push(garbage(0))).toThrow(Mp4Error);
    expect(() => new BoxSplitter().push(garbage(0x7fffffff))).toThrow(Mp4Error);
    expect(() => new BoxSplitter().push(Buffer.from('GET / HTTP/1.1\r\n'))).toThrow(Mp4Error);
  });

  it('reads the tracks of an init segment and the runs of a fragment', () => {
    const boxes = new BoxSplitter().push(
      Buffer.concat([init(), fragment({ startTime: 1024, durations: [512, 512, 512], sync: false })]),
    );
    expect(initTracks(boxes[1]!)).toEqual([
      { id: 1, timescale: 15360, handler: 'vide' },
      { id: 2, timescale: 48000, handler: 'soun' },
    ]);
    expect(fragmentTracks(boxes[2]!)).toEqual([
      { trackId: 1, startTime: 1024, duration: 1536, startsWithSync: false },
      { trackId: 2, startTime: 3200, duration: 5 * 1024, startsWithSync: true },
    ]);
  });

  it('refuses a moof or moov whose inner boxes are cut short', () => {
    const [, moov] = new BoxSplitter().push(init());
    const cut = Buffer.from(moov!.bytes);
    // The first trak claims more bytes than the moov holds.
    cut.writeUInt32BE(cut.length, 8);
    expect(() => initTracks({ type: 'moov', bytes: cut })).toThrow(Mp4Error);
    const [moof] = new BoxSplitter().push(fragment({ startTime: 0, durations: [512], sync: true }));
    const short = Buffer.from(moof!.bytes);
    // The trun announces a million samples it does not have.
    short.writeUInt32BE(1_000_000, short.indexOf('trun') + 8);
    expect(() => fragmentTracks({ type: 'moof', bytes: short })).toThrow(Mp4Error);
  });
});
