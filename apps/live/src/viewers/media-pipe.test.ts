import { describe, expect, it, vi } from 'vitest';
import { FrameReader, frameOf, isMediaMessage, type MediaMessage } from './media-pipe.ts';

const MESSAGES: MediaMessage[] = [
  { type: 'rtp', broadcast: 'b1', kind: 'video', rung: 1, bytes: Buffer.from([0x80, 0x60, 1, 2, 3]) },
  { type: 'hls-bytes', key: 'c/d/0', bytes: Buffer.alloc(10_000, 7) },
  { type: 'hls-bytes', key: 'c/d/0', bytes: null },
  { type: 'hls-bytes', key: 'c/d/1', bytes: Buffer.alloc(0) },
  { type: 'hls-forget', channelId: 'c' },
  {
    type: 'hls-open',
    rendition: {
      key: 'c/d/0',
      channelId: 'c',
      connectionId: 'd',
      organizationId: 3,
      targetDuration: 1,
      options: { targetDuration: 1, partTarget: 0.4, windowSegments: 6, windowBytes: 1 << 20 },
    },
  },
];

/** A message as the reader gives it back: its bytes a Buffer (or null). */
const asRead = (message: MediaMessage) =>
  'bytes' in message && message.bytes ? { ...message, bytes: Buffer.from(message.bytes) } : message;

describe('media pipe', () => {
  it('reads back every message, however the pipe splits the bytes', () => {
    const wire = Buffer.concat(MESSAGES.flatMap((message) => frameOf(message)));
    for (const size of [1, 5, 6, 7, 1000, wire.length]) {
      const reader = new FrameReader();
      const read: MediaMessage[] = [];
      for (let at = 0; at < wire.length; at += size) read.push(...reader.push(wire.subarray(at, at + size)));
      expect(read, `chunks of ${size}`).toEqual(MESSAGES.map(asRead));
    }
  });

  it('joins a large frame that comes in small chunks once, not once per chunk', () => {
    const reader = new FrameReader();
    const wire = Buffer.concat(frameOf({ type: 'hls-bytes', key: 'k', bytes: Buffer.alloc(4 << 20, 1) }));
    const concat = vi.spyOn(Buffer, 'concat');
    const read: MediaMessage[] = [];
    for (let at = 0; at < wire.length; at += 512) read.push(...reader.push(wire.subarray(at, at + 512)));
    expect(read).toHaveLength(1);
    expect(concat).toHaveBeenCalledTimes(1);
    concat.mockRestore();
  });

  it('keeps the bytes it gives out when the next chunk reuses the buffer they came in', () => {
    const reader = new FrameReader();
    const chunk = Buffer.concat(frameOf(MESSAGES[0]!));
    const [message] = reader.push(chunk) as [Extract<MediaMessage, { type: 'rtp' }>];
    chunk.fill(0);
    expect(Buffer.from(message.bytes)).toEqual(Buffer.from([0x80, 0x60, 1, 2, 3]));
  });

  it('carries media only: calls and viewers stay on the IPC channel, in order with the sockets', () => {
    expect(MESSAGES.every(isMediaMessage)).toBe(true);
    expect(isMediaMessage({ type: 'hls-report' })).toBe(false);
    expect(isMediaMessage({ type: 'hls-connection', head: new Uint8Array() })).toBe(false);
    expect(isMediaMessage({ type: 'call', call: 1, viewer: 'v', method: 'close', argument: 'closed' })).toBe(
      false,
    );
  });
});
