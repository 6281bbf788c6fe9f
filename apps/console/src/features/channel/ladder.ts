import type { RenditionInput, VideoCodec } from '@ukiyo/contract';

/** One rung of the ladder as the form holds it (numbers as typed). */
export interface RungForm {
  width: string;
  height: string;
  fps: string;
  kbps: string;
  codec: VideoCodec;
  audioBps: string;
  durationSeconds: string;
}

export const DEFAULT_LADDER: RungForm[] = [
  {
    width: '1280',
    height: '720',
    fps: '30',
    kbps: '2500',
    codec: 'h264_high',
    audioBps: '96000',
    durationSeconds: '1',
  },
  {
    width: '640',
    height: '360',
    fps: '30',
    kbps: '800',
    codec: 'h264_main',
    audioBps: '64000',
    durationSeconds: '1',
  },
];

/** The form's rungs as channel.add's `hls`; the contract's schema checks the values. */
export function renditionsOf(rungs: RungForm[]): RenditionInput[] {
  return rungs.map((rung) => ({
    durationSeconds: Number(rung.durationSeconds),
    video: {
      width: Number(rung.width),
      height: Number(rung.height),
      fps: Number(rung.fps),
      bps: Number(rung.kbps) * 1000,
      codec: rung.codec,
    },
    audio: { bps: Number(rung.audioBps) },
  }));
}

/** A server field path (`hls.0.video.bps`) as the form's (`hls.0.kbps`). */
export function rungFieldOf(field: string): string {
  const match = /^hls\.(\d+)\.(?:video\.(width|height|fps|bps|codec)|audio\.bps|(durationSeconds))/.exec(
    field,
  );
  if (!match) return field;
  const name = match[2] === 'bps' ? 'kbps' : (match[2] ?? match[3] ?? 'audioBps');
  return `hls.${match[1]}.${name}`;
}

/** "1280×720 30fps 2,500 kbps" for the list. */
export function rungSummary(rendition: {
  video?: { width?: number; height?: number; fps?: number; bps?: number };
}): string {
  const video = rendition.video ?? {};
  return `${video.width ?? '?'}×${video.height ?? '?'} ${video.fps ?? '?'}fps ${Math.round((video.bps ?? 0) / 1000)} kbps`;
}
