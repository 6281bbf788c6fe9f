import type { Writable } from 'node:stream';

/** How a publisher reached the channel: the auth webhook's `protocol`, logs and metrics. */
export type IngestProtocol = 'whip' | 'sora' | 'rtmp' | 'srt';

/** A refusal of a publisher (an offer, a stream key, a connect message), with its HTTP status. */
export class PublishError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** What an ingest reports to its publish session. */
export interface IngestSink {
  /** Media arrived (bytes as received): usage, metrics and the no-media timeout. */
  received(bytes: number): void;
  /** The publisher's first keyframe went to ffmpeg: the on-air clock starts. */
  keyframe(): void;
  /** The publisher went away or its connection failed: the session ends. */
  ended(reason: string): void;
}

/**
 * One publisher's media, however it arrives (WebRTC, RTMP, SRT), as the input of the ffmpeg
 * that encodes the channel's HLS ladder (session.ts).
 */
export interface Ingest {
  readonly protocol: IngestProtocol;
  /** ffmpeg's input options and URL: `pipe:0` when start() writes to ffmpeg's stdin. */
  readonly ffmpegInput: string[];
  /**
   * The publisher sends audio, known before ffmpeg starts; undefined when only ffmpeg learns it
   * (a container it reads itself): then audio is mapped if there is some, and the session asks
   * ffmpeg which before it writes the master playlist.
   */
  readonly withAudio: boolean | undefined;
  /** Starts delivering media; `stdin` is ffmpeg's. */
  start(stdin: Writable, sink: IngestSink): void;
  /** Disconnects the publisher at once (it is told, where its protocol can say so). */
  close(): Promise<void>;
}
