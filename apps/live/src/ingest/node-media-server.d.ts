// node-media-server ships JavaScript checked with JSDoc, no declarations: the parts of its RTMP
// and FLV protocol classes that ingest/rtmp.ts uses (the server around them is not used).

declare module 'node-media-server/src/core/avpacket.js' {
  /** One RTMP audio, video or data message: `data` holds the FLV tag body (`size` bytes of it). */
  export default class AVPacket {
    /** 8 audio, 9 video, 18 script data (the FLV tag types). */
    codec_type: number;
    codec_id: number;
    /** Audio: 0 AAC sequence header, 1 frame. Video: 2 sequence header, 3 keyframe, 4 other frame. */
    flags: number;
    dts: number;
    pts: number;
    size: number;
    data: Buffer;
  }
}

declare module 'node-media-server/src/protocol/flv.js' {
  import type AVPacket from 'node-media-server/src/core/avpacket.js';

  export default class Flv {
    static createHeader(hasAudio: boolean, hasVideo: boolean): Buffer;
    /** The FLV tag of a packet, previous-tag-size included (a copy of the packet's data). */
    static createMessage(packet: AVPacket): Buffer;
  }
}

declare module 'node-media-server/src/protocol/rtmp.js' {
  import type AVPacket from 'node-media-server/src/core/avpacket.js';

  interface RtmpPacket {
    header: { fmt: number; cid: number; timestamp: number; length: number; type: number; stream_id: number };
  }

  /** The RTMP server side of one connection: bytes in (parserData), bytes out (onOutputCallback). */
  export default class Rtmp {
    onOutputCallback: (buffer: Buffer) => void;
    onPacketCallback: (packet: AVPacket) => void;
    /** Handshake and chunk parsing; a string is a parse error. Throws on some malformed input. */
    parserData(buffer: Buffer): string | null;
    protected parserPacket: RtmpPacket;
    protected inPackets: Map<number, RtmpPacket>;
    streamApp: string;
    streamName: string;
    streamId: number;
    /** Sizes the buffer of the message whose header was just read (parserPacket). */
    protected packetAlloc(): void;
    protected onPublish(message: { streamName: string }): void;
    protected onPlay(message: { streamName: string }): void;
    /** onStatus NetStream.Publish.Start for streamApp, streamName on streamId. */
    respondPublish(): void;
    sendStatusMessage(streamId: number, level: string, code: string, description: string): void;
  }
}
