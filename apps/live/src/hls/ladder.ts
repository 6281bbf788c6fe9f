import type { Rendition, VideoCodec } from '@ukiyo/contract';

/**
 * The HLS ladder of one publisher as ffmpeg arguments and playlists (pure: unit-tested).
 * One ffmpeg reads the publisher's media (the ingest's: WebM, FLV or MPEG-TS) and writes one HLS
 * output per rendition, each with its own segment length, into `{dir}/{index}/`; the master
 * playlist is ours.
 */

/** H.264 levels: max frame size and max macroblock rate (ITU-T H.264 table A-1). */
const LEVELS: [level: number, frameMbs: number, mbsPerSecond: number][] = [
  [21, 792, 19_800],
  [22, 1_620, 20_250],
  [30, 1_620, 40_500],
  [31, 3_600, 108_000],
  [32, 5_120, 216_000],
  [40, 8_192, 245_760],
  [42, 8_704, 522_240],
  [50, 22_080, 589_824],
  [51, 36_864, 983_040],
  [52, 36_864, 2_073_600],
  [60, 139_264, 4_177_920],
];

/** x264 needs even dimensions for 4:2:0: odd requests lose one pixel. */
export function outputSize(rendition: Rendition): { width: number; height: number } {
  return { width: rendition.video.width & ~1, height: rendition.video.height & ~1 };
}

export function h264Level(width: number, height: number, fps: number): number {
  const frameMbs = Math.ceil(width / 16) * Math.ceil(height / 16);
  const found = LEVELS.find(([, maxFrame, maxRate]) => frameMbs <= maxFrame && frameMbs * fps <= maxRate);
  return (found ?? LEVELS[LEVELS.length - 1]!)[0];
}

const PROFILES: Record<VideoCodec, { name: string; idc: string; x264: string[] }> = {
  // ultrafast turns CABAC and 8x8 transforms off, which would silently make every stream
  // baseline; the profile asked for gets the tools that define it back.
  h264_high: { name: 'high', idc: '6400', x264: ['cabac=1', '8x8dct=1'] },
  h264_main: { name: 'main', idc: '4d40', x264: ['cabac=1'] },
  h264_baseline: { name: 'baseline', idc: '42e0', x264: [] },
};

/** The rendition's H.264 profile and level as RFC 6381 and RFC 6184 write them (`42e01f`). */
export function profileLevelId(rendition: Rendition): string {
  const { width, height } = outputSize(rendition);
  const level = h264Level(width, height, rendition.video.fps).toString(16).padStart(2, '0');
  return `${PROFILES[rendition.video.codec].idc}${level}`;
}

export function codecsAttribute(rendition: Rendition, withAudio: boolean): string {
  const video = `avc1.${profileLevelId(rendition)}`;
  return withAudio ? `${video},mp4a.40.2` : video;
}

/** The renditions' indexes, largest picture first. */
function largestFirst(renditions: Rendition[]): number[] {
  const area = (index: number) => renditions[index]!.video.width * renditions[index]!.video.height;
  return renditions.map((_, index) => index).sort((a, b) => area(b) - area(a));
}

/**
 * The constrained-baseline renditions, largest first: every WebRTC H.264 decoder takes them
 * (OpenH264, Firefox's plugin, documents no other profile), whatever profile a viewer negotiated.
 * So they are the rungs a WebRTC publisher's H.264 viewers can move down to from its own stream.
 */
export function baselineRenditions(renditions: Rendition[]): number[] {
  return largestFirst(renditions).filter((index) => renditions[index]!.video.codec === 'h264_baseline');
}

/**
 * The renditions whose video WebRTC viewers of an RTMP or SRT publisher get, largest first: a
 * viewer starts on the first and moves down the others while its link loses packets (fanout.ts).
 * They are the baseline ones, else those of the largest rendition's profile (Chromium and Safari
 * decode main and high): one profile, so the one the SDP names holds for every rung. Reused as
 * they are: no second encode for WebRTC.
 */
export function webRtcRenditions(renditions: Rendition[]): number[] {
  const baseline = baselineRenditions(renditions);
  if (baseline.length > 0) return baseline;
  const byArea = largestFirst(renditions);
  const codec = renditions[byArea[0]!]!.video.codec;
  return byArea.filter((index) => renditions[index]!.video.codec === codec);
}

/** The RTP payload types ffmpeg's RTP outputs carry (rtp-source.ts takes only these). */
export const RTP_PAYLOAD_TYPES = { video: 96, audio: 111 } as const;
/** RTP packets at most this long: room for SRTP's tag and header extensions within a 1280 MTU. */
const RTP_PACKET_BYTES = 1200;

/** Peak bits per second of a variant: video max rate, audio, and MPEG-TS overhead. */
export function variantBandwidth(rendition: Rendition, withAudio: boolean): number {
  return Math.ceil(((rendition.video.bps + (withAudio ? rendition.audio.bps : 0)) * 11) / 10);
}

export interface LadderInput {
  /** ffmpeg's input options and URL (the ingest's). */
  input: string[];
  renditions: Rendition[];
  /** Where `{index}/index.m3u8` and `{index}/seg{n}.ts` are written. */
  dir: string;
  /** Undefined: audio is mapped when the input has some, and ffmpeg says so (STREAMS_PLAYLIST). */
  withAudio: boolean | undefined;
  /** ffmpeg's key info file (URI line, key file line, no IV line): AES-128 segments. */
  keyInfoFile?: string;
  /**
   * Low-Latency HLS: each rendition's encoded streams also go, as fragmented MP4 of a fragment
   * per frame, to ffmpeg's file descriptor `3 + index` (ll-hls.ts gathers them into parts).
   * ffmpeg 5.1's hls muxer cannot write parts, and its fMP4 output cannot be AES-128 encrypted
   * per part, so encrypted ladders stay on MPEG-TS segments only.
   */
  lowLatency?: boolean;
  /**
   * The ladder's rungs for WebRTC viewers: each rung's H.264 goes over RTP to
   * 127.0.0.1:`videoPort`, and with `audioPort` (a publisher that sends no RTP: RTMP, SRT) the
   * first rung's audio, encoded again as Opus.
   */
  rtp?: { rungs: { rendition: number; videoPort: number }[]; audioPort?: number };
}

/** Part length aimed at: PART-HOLD-BACK (three parts) stays near one second. */
const PART_TARGET_SECONDS = 0.4;

/**
 * A rendition's EXT-X-PART-INF PART-TARGET: a whole number of frames near PART_TARGET_SECONDS
 * (ll-hls.ts closes a part when its frames fill it), rounded up to the millisecond written.
 */
export function partTarget(rendition: Rendition): number {
  const frames = Math.max(1, Math.round(PART_TARGET_SECONDS * rendition.video.fps));
  return Math.ceil((frames / rendition.video.fps) * 1000) / 1000;
}

/** How many segments a media playlist lists; older ones are deleted a little later. */
const LIST_SIZE = 10;

/**
 * ffmpeg's own master playlist of the first rendition, written beside its media playlist with
 * its first segment (never served) when the ingest cannot tell whether audio comes: its CODECS
 * say whether ffmpeg mapped any (see mapsAudio).
 */
export const STREAMS_PLAYLIST = 'streams.m3u8';

/** Whether ffmpeg's master (STREAMS_PLAYLIST) lists audio; undefined before it lists its variant. */
export function mapsAudio(streamsPlaylist: string): boolean | undefined {
  const variant = /^#EXT-X-STREAM-INF:(.*)$/m.exec(streamsPlaylist)?.[1];
  if (variant === undefined) return undefined;
  return /CODECS="[^"]*mp4a\./.test(variant);
}

export function ffmpegArgs(input: LadderInput): string[] {
  const { renditions, dir } = input;
  const filters = [`[0:v]split=${renditions.length}${renditions.map((_, i) => `[s${i}]`).join('')}`];
  for (const [i, rendition] of renditions.entries()) {
    const { width, height } = outputSize(rendition);
    filters.push(
      `[s${i}]fps=${rendition.video.fps},scale=${width}:${height}:force_original_aspect_ratio=decrease,` +
        `pad=${width}:${height}:(ow-iw)/2:(oh-ih)/2,setsar=1,format=yuv420p[v${i}]`,
    );
  }
  const args = [
    '-hide_banner',
    '-nostats',
    '-loglevel',
    'error',
    ...input.input,
    '-filter_complex',
    filters.join(';'),
  ];
  for (const [i, rendition] of renditions.entries()) {
    const { width, height } = outputSize(rendition);
    const { fps, bps, codec } = rendition.video;
    const seconds = rendition.durationSeconds;
    // A WebRTC rung's RTP outputs: its video, and with the first rung's the audio as Opus.
    const rung = input.rtp?.rungs.findIndex(({ rendition }) => rendition === i) ?? -1;
    const rtp =
      rung < 0
        ? undefined
        : {
            videoPort: input.rtp!.rungs[rung]!.videoPort,
            opusPort: rung === 0 && input.withAudio !== false ? input.rtp!.audioPort : undefined,
          };
    const audioMap =
      input.withAudio === undefined ? ['-map', '0:a?'] : input.withAudio ? ['-map', '0:a'] : [];
    // One GOP per segment, cut on time and never on scene changes: segments are exactly
    // durationSeconds, each starts with a keyframe, and a player can start on any of them.
    const gop = fps * seconds;
    args.push(
      '-map',
      `[v${i}]`,
      ...audioMap,
      // The same audio a second time, for WebRTC: Opus (browsers decode no AAC over WebRTC).
      ...(rtp?.opusPort !== undefined ? audioMap : []),
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-tune',
      'zerolatency',
      '-profile:v',
      PROFILES[codec].name,
      '-level:v',
      (h264Level(width, height, fps) / 10).toFixed(1),
      '-x264-params',
      ['scenecut=0', 'open-gop=0', ...PROFILES[codec].x264].join(':'),
      '-b:v',
      String(bps),
      '-maxrate:v',
      String(bps),
      '-bufsize:v',
      String(bps),
      '-g:v',
      String(gop),
      '-keyint_min:v',
      String(gop),
      '-sc_threshold:v',
      '0',
      '-force_key_frames:v',
      `expr:gte(t,n_forced*${seconds})`,
      ...(input.withAudio !== false
        ? [
            // FLV and WebM time audio in milliseconds, so its frames arrive up to a millisecond
            // early or late, and publishers' clocks jitter and skip: resampled onto one sample
            // clock (silence for a gap, overlaps dropped), the audio has no holes, which a player
            // would see in its buffered range (audio and video intersected) and stall at.
            '-af',
            'aresample=async=1000',
            ...['-c:a', 'aac', '-b:a', String(rendition.audio.bps), '-ac', '2', '-ar', '48000'],
            ...(rtp?.opusPort !== undefined
              ? ['-c:a:1', 'libopus', '-b:a:1', String(rendition.audio.bps)]
              : []),
          ]
        : []),
    );
    const hls: [string, string][] = [
      ['hls_time', String(seconds)],
      ['hls_list_size', String(LIST_SIZE)],
      ['hls_delete_threshold', '3'],
      [
        'hls_flags',
        [
          'independent_segments',
          'delete_segments',
          'temp_file',
          // ffmpeg 5.1 keeps the first segment's IV (sequence 0: all zeros) for every segment
          // unless it rereads the key info file per segment; then each segment is encrypted with
          // its media sequence number as IV, written as the IV of its own EXT-X-KEY.
          ...(input.keyInfoFile ? ['periodic_rekey'] : []),
        ].join('+'),
      ],
      ['hls_segment_type', 'mpegts'],
      ...(input.keyInfoFile ? [['hls_key_info_file', input.keyInfoFile] as [string, string]] : []),
      ...(input.withAudio === undefined && i === 0
        ? [['master_pl_name', STREAMS_PLAYLIST] as [string, string]]
        : []),
      ['hls_segment_filename', `${dir}/${i}/seg%d.ts`],
    ];
    const playlist = `${dir}/${i}/index.m3u8`;
    if (!input.lowLatency && !rtp) {
      args.push('-f', 'hls', ...hls.flatMap(([name, value]) => [`-${name}`, value]), playlist);
      continue;
    }
    // The same encoded streams to several muxers (tee): MPEG-TS segments on disk, which the
    // archive reads, and, for LL-HLS, fMP4 fragments on a pipe, and, for WebRTC, RTP. The HLS
    // muxers take the AAC audio only when the Opus copy is there.
    const hlsStreams: [string, string][] = rtp?.opusPort !== undefined ? [['select', 'v,a:0']] : [];
    const slaves = [`${teeSlave([['f', 'hls'], ...hlsStreams, ...hls])}${teeEscape(playlist)}`];
    if (input.lowLatency) {
      // The mp4 muxer needs the codecs' headers up front (global_header, below).
      // use_fifo: fed straight by ffmpeg 5.1's tee, the mp4 muxer cutting a fragment per frame
      // writes every other audio fragment with a zero duration and the next one a sample late,
      // so a player's audio (and with it the buffered range) has a hole each 43 ms; behind a
      // fifo every sample keeps its time.
      const fragments = teeSlave([
        ['f', 'mp4'],
        ...hlsStreams,
        ['movflags', '+empty_moov+default_base_moof+frag_every_frame'],
        ['flush_packets', '1'],
        ['use_fifo', '1'],
      ]);
      slaves.push(`${fragments}pipe:${3 + i}`);
    }
    if (rtp) {
      // Each RTP muxer takes one stream. dump_extra puts SPS and PPS (only in the extradata
      // under global_header) before every keyframe, in-band, where a WebRTC viewer joining
      // starts; without global_header x264 repeats them itself and the filter adds nothing.
      // skip_rtcp: the live process reads RTP only. onfail=ignore: a failed RTP output (an
      // audio one with no audio to send) leaves the HLS outputs running.
      const rtpSlave = (options: [string, string][], port: number) =>
        `${teeSlave([['f', 'rtp'], ...options, ['rtpflags', 'skip_rtcp'], ['onfail', 'ignore']])}` +
        teeEscape(`udp://127.0.0.1:${port}?pkt_size=${RTP_PACKET_BYTES}`);
      slaves.push(
        rtpSlave(
          [
            ['select', 'v'],
            ['bsfs/v', 'dump_extra'],
            ['payload_type', String(RTP_PAYLOAD_TYPES.video)],
          ],
          rtp.videoPort,
        ),
      );
      if (rtp.opusPort !== undefined) {
        slaves.push(
          rtpSlave(
            [
              ['select', 'a:1'],
              ['payload_type', String(RTP_PAYLOAD_TYPES.audio)],
            ],
            rtp.opusPort,
          ),
        );
      }
    }
    args.push(...(input.lowLatency ? ['-flags', '+global_header'] : []), '-f', 'tee', slaves.join('|'));
  }
  return args;
}

/** A tee slave's options in brackets, each value escaped as teeEscape says. */
function teeSlave(options: [string, string][]): string {
  return `[${options.map(([name, value]) => `${name}=${teeEscape(teeEscape(value))}`).join(':')}]`;
}

/**
 * Taken literally by the tee muxer: it unescapes a slave's whole text once, then its options
 * once more (so an option value is escaped twice, a file name once).
 */
function teeEscape(value: string): string {
  return value.replace(/[\\:|[\]]/g, (char) => `\\${char}`);
}

export function masterPlaylist(renditions: Rendition[], withAudio: boolean): string {
  const lines = ['#EXTM3U', '#EXT-X-VERSION:3', '#EXT-X-INDEPENDENT-SEGMENTS'];
  for (const [i, rendition] of renditions.entries()) {
    const { width, height } = outputSize(rendition);
    lines.push(
      `#EXT-X-STREAM-INF:BANDWIDTH=${variantBandwidth(rendition, withAudio)},RESOLUTION=${width}x${height},` +
        `FRAME-RATE=${rendition.video.fps.toFixed(3)},CODECS="${codecsAttribute(rendition, withAudio)}"`,
      `${i}/index.m3u8`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/** ffmpeg has no EXT-X-START: it is added to each media playlist as it is served or archived. */
export function decorateMediaPlaylist(playlist: string, rendition: Rendition): string {
  if (rendition.startTimeOffset === undefined || !playlist.startsWith('#EXTM3U')) return playlist;
  const newline = playlist.indexOf('\n');
  return `${playlist.slice(0, newline + 1)}#EXT-X-START:TIME-OFFSET=${rendition.startTimeOffset}\n${playlist.slice(newline + 1)}`;
}

/** The segment file names of a media playlist, oldest first. */
export function playlistSegments(playlist: string): string[] {
  return playlist
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}
