import type { ToViewerProcess } from './viewer-process.ts';

/**
 * The media a viewer child process is sent (RTP packets, LL-HLS renditions' bytes) goes on a
 * pipe of its own, the child's file descriptor MEDIA_PIPE_FD, not on its IPC channel: Node sends
 * nothing more on an IPC channel while a socket handle sent on it waits for the child's
 * acknowledgement, and a crowd of LL-HLS viewers' connections handed over one by one held the
 * media behind them (parts seconds late in the viewer processes, 23 s glass-to-glass).
 */
export const MEDIA_PIPE_FD = 4;

export type MediaMessage = Extract<
  ToViewerProcess,
  { type: 'rtp' | 'hls-open' | 'hls-bytes' | 'hls-forget' }
>;

const MEDIA_TYPES = new Set<string>(['rtp', 'hls-open', 'hls-bytes', 'hls-forget']);
/** The messages with bytes. */
const CARRY_BYTES = new Set<string>(['rtp', 'hls-bytes']);

export function isMediaMessage(message: ToViewerProcess): message is MediaMessage {
  return MEDIA_TYPES.has(message.type);
}

/**
 * A message as written on the pipe: the frame's length after its first 4 bytes, the header's
 * length (2 bytes), the header (the message but its bytes, as JSON), then the bytes.
 */
export function frameOf(message: MediaMessage): Buffer[] {
  const bytes = 'bytes' in message ? message.bytes : null;
  const header = Buffer.from(JSON.stringify(bytes ? { ...message, bytes: undefined } : message));
  const prefix = Buffer.alloc(6);
  prefix.writeUInt32BE(2 + header.length + (bytes?.length ?? 0), 0);
  prefix.writeUInt16BE(header.length, 4);
  return bytes
    ? [prefix, header, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)]
    : [prefix, header];
}

/** The bytes before a frame's header: its length (4), then its header's (2). */
const PREFIX_BYTES = 6;

/**
 * Reads the messages back from the pipe's chunks. Chunks are kept as they come until the frame
 * they are part of is whole, and joined then: a large frame that arrives in small chunks is
 * copied once, not once per chunk.
 */
export class FrameReader {
  private chunks: Buffer[] = [];
  private length = 0;
  /** The bytes the next frame needs in all, as far as its prefix tells yet. */
  private needed = PREFIX_BYTES;

  push(chunk: Buffer): MediaMessage[] {
    this.chunks.push(chunk);
    this.length += chunk.length;
    if (this.length < this.needed) return [];
    let pending = this.chunks.length === 1 ? chunk : Buffer.concat(this.chunks, this.length);
    const messages: MediaMessage[] = [];
    while (pending.length >= PREFIX_BYTES) {
      const end = 4 + pending.readUInt32BE(0);
      if (pending.length < end) break;
      const headerEnd = PREFIX_BYTES + pending.readUInt16BE(4);
      const message = JSON.parse(pending.toString('utf8', PREFIX_BYTES, headerEnd)) as MediaMessage;
      // The bytes follow the header, but a null's (an ended rendition's): a copy, as the chunk
      // they came in is kept no longer than they are.
      if (CARRY_BYTES.has(message.type) && !('bytes' in message))
        Object.assign(message, { bytes: Buffer.from(pending.subarray(headerEnd, end)) });
      messages.push(message);
      pending = pending.subarray(end);
    }
    this.chunks = pending.length ? [pending] : [];
    this.length = pending.length;
    this.needed = pending.length >= 4 ? Math.max(PREFIX_BYTES, 4 + pending.readUInt32BE(0)) : PREFIX_BYTES;
    return messages;
  }
}
