import { Rendition } from '@ukiyo/contract';
import { describe, expect, it } from 'vitest';
import {
  baselineRenditions,
  codecsAttribute,
  decorateMediaPlaylist,
  ffmpegArgs,
  h264Level,
  mapsAudio,
  masterPlaylist,
  partTarget,
  playlistSegments,
  profileLevelId,
  webRtcRenditions,
} from './ladder.ts';

const hd = Rendition.parse({
  durationSeconds: 2,
  video: { width: 1280, height: 720, fps: 30, bps: 2_500_000 },
});
const small = Rendition.parse({
  startTimeOffset: -3,
  video: { width: 641, height: 361, fps: 15, bps: 400_000, codec: 'h264_baseline' },
  audio: { bps: 64000 },
});

describe('HLS ladder', () => {
  it('picks the lowest H.264 level that fits size and frame rate', () => {
    expect(h264Level(1280, 720, 30)).toBe(31);
    expect(h264Level(1280, 720, 60)).toBe(32);
    expect(h264Level(1920, 1080, 30)).toBe(40);
    expect(h264Level(160, 90, 15)).toBe(21);
    expect(h264Level(4096, 4096, 30)).toBe(60);
  });

  it('writes a master playlist with bandwidth, even resolution and codecs', () => {
    expect(masterPlaylist([hd, small], true)).toBe(
      [
        '#EXTM3U',
        '#EXT-X-VERSION:3',
        '#EXT-X-INDEPENDENT-SEGMENTS',
        '#EXT-X-STREAM-INF:BANDWIDTH=2855600,RESOLUTION=1280x720,FRAME-RATE=30.000,CODECS="avc1.64001f,mp4a.40.2"',
        '0/index.m3u8',
        '#EXT-X-STREAM-INF:BANDWIDTH=510400,RESOLUTION=640x360,FRAME-RATE=15.000,CODECS="avc1.42e016,mp4a.40.2"',
        '1/index.m3u8',
        '',
      ].join('\n'),
    );
    expect(codecsAttribute(hd, false)).toBe('avc1.64001f');
  });

  it('encodes each rendition with a GOP of one segment, its profile and bitrate', () => {
    const args = ffmpegArgs({
      input: ['-i', 'pipe:0'],
      renditions: [hd, small],
      dir: '/d',
      withAudio: true,
      keyInfoFile: '/k',
    }).join(' ');
    expect(args).toContain('[0:v]split=2[s0][s1]');
    expect(args).toContain('[s1]fps=15,scale=640:360:force_original_aspect_ratio=decrease,pad=640:360');
    expect(args).toContain(
      '-profile:v high -level:v 3.1 -x264-params scenecut=0:open-gop=0:cabac=1:8x8dct=1 -b:v 2500000 -maxrate:v 2500000 -bufsize:v 2500000 -g:v 60 -keyint_min:v 60',
    );
    expect(args).toContain('-force_key_frames:v expr:gte(t,n_forced*2)');
    expect(args).toContain('-c:a aac -b:a 64000');
    expect(args).toContain('-hls_time 2 ');
    expect(args).toContain(
      '-hls_flags independent_segments+delete_segments+temp_file+periodic_rekey -hls_segment_type mpegts -hls_key_info_file /k -hls_segment_filename /d/1/seg%d.ts /d/1/index.m3u8',
    );
    const clear = ffmpegArgs({ input: ['-i', 'pipe:0'], renditions: [hd], dir: '/d', withAudio: false });
    expect(clear).not.toContain('0:a');
    expect(clear).toContain('independent_segments+delete_segments+temp_file');
  });

  it('tees each rendition of a low-latency ladder to MPEG-TS segments and fMP4 parts on its own pipe', () => {
    const args = ffmpegArgs({
      input: ['-i', 'pipe:0'],
      renditions: [hd, small],
      dir: '/d:x',
      withAudio: undefined,
      lowLatency: true,
    });
    expect(args.filter((arg) => arg === 'tee')).toHaveLength(2);
    expect(args.filter((arg) => arg === '+global_header')).toHaveLength(2);
    const outputs = args.filter((arg) => arg.startsWith('[f=hls:'));
    // The directory's colon is escaped (tee separates options with colons): twice in an option.
    expect(outputs[0]).toBe(
      '[f=hls:hls_time=2:hls_list_size=10:hls_delete_threshold=3:hls_flags=independent_segments+delete_segments+temp_file:hls_segment_type=mpegts:master_pl_name=streams.m3u8:hls_segment_filename=/d\\\\\\:x/0/seg%d.ts]/d\\:x/0/index.m3u8|' +
        '[f=mp4:movflags=+empty_moov+default_base_moof+frag_every_frame:flush_packets=1:use_fifo=1]pipe:3',
    );
    expect(outputs[1]).toContain(']pipe:4');
    // Whole frames: 12 at 30 fps, 6 at 15 fps, 10 at 24 fps (0.41666... written 0.417).
    expect(partTarget(hd)).toBe(0.4);
    expect(partTarget(small)).toBe(0.4);
    expect(partTarget(Rendition.parse({ video: { width: 64, height: 64, fps: 24, bps: 100_000 } }))).toBe(
      0.417,
    );
    expect(partTarget(Rendition.parse({ video: { width: 64, height: 64, fps: 1, bps: 100_000 } }))).toBe(1);
  });

  it('maps audio if there is some when the ingest cannot tell, and has ffmpeg say which', () => {
    const args = ffmpegArgs({
      input: ['-i', 'srt://'],
      renditions: [hd, small],
      dir: '/d',
      withAudio: undefined,
    });
    expect(args.filter((arg) => arg === '0:a?')).toHaveLength(2);
    expect(args.filter((arg) => arg === '0:a')).toHaveLength(0);
    expect(args.filter((arg) => arg === 'aac')).toHaveLength(2);
    // ffmpeg's own master playlist beside the first rendition's only.
    expect(args.join(' ')).toContain('-master_pl_name streams.m3u8 -hls_segment_filename /d/0/seg%d.ts');
    expect(args.filter((arg) => arg === '-master_pl_name')).toHaveLength(1);
    const known = ffmpegArgs({ input: ['-i', 'pipe:0'], renditions: [hd], dir: '/d', withAudio: true });
    expect(known).toContain('0:a');
    expect(known).not.toContain('-master_pl_name');

    const written = (codecs: string) =>
      `#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-STREAM-INF:BANDWIDTH=1,RESOLUTION=320x180,CODECS="${codecs}"\nindex.m3u8\n`;
    expect(mapsAudio(written('avc1.64000d,mp4a.40.2'))).toBe(true);
    expect(mapsAudio(written('avc1.64000d'))).toBe(false);
    expect(mapsAudio('#EXTM3U\n#EXT-X-VERSION:3\n')).toBeUndefined();
    expect(mapsAudio('')).toBeUndefined();
  });

  it("sends the WebRTC rungs over RTP: their H.264 with in-band parameter sets, the first one's audio as Opus", () => {
    const args = ffmpegArgs({
      input: ['-i', 'srt://'],
      renditions: [hd, small],
      dir: '/d',
      withAudio: undefined,
      lowLatency: true,
      rtp: { rungs: [{ rendition: 1, videoPort: 40000 }], audioPort: 40002 },
    });
    // The audio mapped twice for the RTP rendition only; its second copy is Opus.
    expect(args.filter((arg) => arg === '0:a?')).toHaveLength(3);
    expect(args.join(' ')).toContain('-c:a aac -b:a 64000 -ac 2 -ar 48000 -c:a:1 libopus -b:a:1 64000');
    expect(args.filter((arg) => arg === 'libopus')).toHaveLength(1);
    const tees = args.filter((arg) => arg.startsWith('[f=hls:'));
    expect(tees[0]).not.toContain('f=rtp');
    const slaves = tees[1]!.split('|');
    // The HLS muxers keep the AAC audio only (a colon in an option is escaped twice).
    expect(slaves[0]).toMatch(/^\[f=hls:select=v,a\\\\\\:0:hls_time=1:/);
    expect(slaves[1]).toMatch(/^\[f=mp4:select=v,a\\\\\\:0:movflags=/);
    expect(slaves[2]).toBe(
      '[f=rtp:select=v:bsfs/v=dump_extra:payload_type=96:rtpflags=skip_rtcp:onfail=ignore]udp\\://127.0.0.1\\:40000?pkt_size=1200',
    );
    expect(slaves[3]).toBe(
      '[f=rtp:select=a\\\\\\:1:payload_type=111:rtpflags=skip_rtcp:onfail=ignore]udp\\://127.0.0.1\\:40002?pkt_size=1200',
    );

    // Encrypted ladders (no LL-HLS) tee the RTP rendition too; no global header: x264 repeats
    // SPS and PPS in-band itself. No audio: no Opus and no audio RTP.
    const plain = ffmpegArgs({
      input: ['-i', 'pipe:0'],
      renditions: [hd],
      dir: '/d',
      withAudio: false,
      keyInfoFile: '/k',
      rtp: { rungs: [{ rendition: 0, videoPort: 40000 }], audioPort: 40002 },
    });
    expect(plain).not.toContain('+global_header');
    expect(plain).not.toContain('libopus');
    const slavesOfPlain = plain.at(-1)!.split('|');
    expect(slavesOfPlain).toHaveLength(2);
    expect(slavesOfPlain[0]).toContain('hls_key_info_file=/k');
    expect(slavesOfPlain[1]).toContain('select=v:bsfs/v=dump_extra');

    // A lower rung: its video over RTP to its own port, no second audio.
    const rungs = ffmpegArgs({
      input: ['-i', 'pipe:0'],
      renditions: [hd, small],
      dir: '/d',
      withAudio: true,
      rtp: {
        rungs: [
          { rendition: 0, videoPort: 40000 },
          { rendition: 1, videoPort: 40004 },
        ],
        audioPort: 40002,
      },
    });
    expect(rungs.filter((arg) => arg === 'libopus')).toHaveLength(1);
    const [first, second] = rungs.filter((arg) => arg.startsWith('[f=hls:')).map((tee) => tee.split('|'));
    expect(first).toHaveLength(3);
    expect(first![2]).toContain('40002');
    expect(second).toHaveLength(2);
    expect(second![0]).not.toContain('select=');
    expect(second![1]).toContain('select=v:bsfs/v=dump_extra:payload_type=96');
    expect(second![1]).toContain('40004');

    // A WebRTC publisher's rungs (its viewers keep its own audio): video only, no Opus.
    const beneath = ffmpegArgs({
      input: ['-i', 'pipe:0'],
      renditions: [hd, small],
      dir: '/d',
      withAudio: true,
      rtp: { rungs: [{ rendition: 1, videoPort: 40004 }] },
    });
    expect(beneath).not.toContain('libopus');
    const slavesBeneath = beneath.at(-1)!.split('|');
    expect(slavesBeneath).toHaveLength(2);
    expect(slavesBeneath[0]).not.toContain('select=');
    expect(slavesBeneath[1]).toContain('select=v:bsfs/v=dump_extra:payload_type=96');
  });

  it("gives WebRTC viewers the baseline rungs, else those of the largest's profile, largest first", () => {
    const big = Rendition.parse({ video: { width: 1920, height: 1080, bps: 6_000_000 } });
    const mainProfile = Rendition.parse({
      video: { width: 640, height: 360, bps: 800_000, codec: 'h264_main' },
    });
    expect(webRtcRenditions([hd, small])).toEqual([1]);
    expect(
      webRtcRenditions([small, hd, { ...small, video: { ...small.video, width: 960, height: 540 } }]),
    ).toEqual([2, 0]);
    expect(webRtcRenditions([hd, big])).toEqual([1, 0]);
    expect(webRtcRenditions([mainProfile, hd, big])).toEqual([2, 1]);
    // Beneath a WebRTC publisher's own stream: the baseline ones only, whatever it sends.
    expect(
      baselineRenditions([small, hd, { ...small, video: { ...small.video, width: 960, height: 540 } }]),
    ).toEqual([2, 0]);
    expect(baselineRenditions([mainProfile, hd, big])).toEqual([]);
    expect(profileLevelId(small)).toBe('42e016');
    expect(profileLevelId(hd)).toBe('64001f');
  });

  it('adds EXT-X-START to media playlists and lists their segments', () => {
    const playlist = '#EXTM3U\n#EXT-X-VERSION:3\n#EXTINF:1.0,\nseg3.ts\n#EXTINF:1.0,\nseg4.ts\n';
    expect(decorateMediaPlaylist(playlist, small)).toBe(
      '#EXTM3U\n#EXT-X-START:TIME-OFFSET=-3\n#EXT-X-VERSION:3\n#EXTINF:1.0,\nseg3.ts\n#EXTINF:1.0,\nseg4.ts\n',
    );
    expect(decorateMediaPlaylist(playlist, hd)).toBe(playlist);
    expect(playlistSegments(playlist)).toEqual(['seg3.ts', 'seg4.ts']);
  });
});
