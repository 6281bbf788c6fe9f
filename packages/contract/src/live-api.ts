import { z } from 'zod';
import { messageRef } from './messages.ts';
import { integer, text } from './validation.ts';

/**
 * The live API (live-api.md): Sora-style JSON calls named by `X-Sora-Target`, on the live host.
 * Field names follow the public ImageFlux Live API exactly (snake_case at the top level, the
 * rendition's own camelCase inside `hls[]`). Failures carry the same message references as the
 * ui-api (`validation.between|min=36&max=4096`), keyed by field path.
 */

/** Audio bitrates a rendition may use; others round down to the nearest one (32000 at least). */
export const AUDIO_BITRATES = [
  32000, 40000, 48000, 56000, 64000, 80000, 96000, 112000, 128000, 160000, 192000, 224000, 256000, 320000,
] as const;
export const DEFAULT_AUDIO_BITRATE = 96000;

export function roundAudioBitrate(bps: number): number {
  let chosen: number = AUDIO_BITRATES[0];
  for (const allowed of AUDIO_BITRATES) if (allowed <= bps) chosen = allowed;
  return chosen;
}

export const VIDEO_CODECS = ['h264_high', 'h264_main', 'h264_baseline'] as const;
export type VideoCodec = (typeof VIDEO_CODECS)[number];

const httpUrl = (max: number) =>
  text(max).refine((value) => {
    if (value === '') return true;
    try {
      return ['http:', 'https:'].includes(new URL(value).protocol);
    } catch {
      return false;
    }
  }, 'validation.invalid');

/** An http(s) URL, or '' for none. */
export const optionalHttpUrl = () => httpUrl(2048).default('');

const number = (min: number, max: number) =>
  z
    .number({ error: (issue) => (issue.input === undefined ? 'validation.required' : 'validation.numeric') })
    .min(min, messageRef('validation.between', { min, max }))
    .max(max, messageRef('validation.between', { min, max }));

export const Rendition = z.object({
  /** Segment length: shorter means less latency and more requests. */
  durationSeconds: integer(1, 10).default(1),
  /** Becomes `#EXT-X-START:TIME-OFFSET`; negative counts back from the live edge. */
  startTimeOffset: number(-60, 60).optional(),
  video: z.object({
    width: integer(36, 4096),
    height: integer(36, 4096),
    fps: integer(1, 60).default(30),
    /** Maximum bitrate, bits per second. */
    bps: integer(50_000, 50_000_000).default(1_000_000),
    codec: z.enum(VIDEO_CODECS, { error: 'validation.invalid' }).default('h264_high'),
  }),
  audio: z
    .object({
      bps: z
        .number({ error: 'validation.numeric' })
        .int('validation.numeric')
        .default(DEFAULT_AUDIO_BITRATE)
        .transform(roundAudioBitrate),
    })
    .default({ bps: DEFAULT_AUDIO_BITRATE }),
  archive: z.object({ archive_destination_id: text(64).default('') }).default({ archive_destination_id: '' }),
});
export type Rendition = z.output<typeof Rendition>;
export type RenditionInput = z.input<typeof Rendition>;

/** At most this many renditions per channel: each is a live x264 encode. */
export const MAX_RENDITIONS = 4;
export const RenditionLadder = z
  .array(Rendition, { error: 'validation.required' })
  .min(1, 'validation.required')
  .max(MAX_RENDITIONS, messageRef('validation.between', { min: 1, max: MAX_RENDITIONS }));

const channelId = () => text(64).min(1, 'validation.required');

const webhooks = {
  auth_webhook_url: optionalHttpUrl(),
  event_webhook_url: optionalHttpUrl(),
  /** Viewers (WHEP, HLS) need a playback token made with CreatePlaybackToken. */
  playback_token_required: z.boolean({ error: 'validation.invalid' }).default(false),
};

/** Playback tokens live at most a day. */
export const MAX_PLAYBACK_TOKEN_SECONDS = 86_400;

/**
 * A created channel: the reference's `channel_id` and `sora_url`, then where each other kind of
 * publisher connects (WHIP; RTMP, RTMPS and SRT with the channel's stream key).
 */
const CreatedChannel = z.object({
  channel_id: z.string(),
  sora_url: z.string(),
  whip_url: z.string(),
  rtmp_url: z.string(),
  rtmps_url: z.string().nullable(),
  stream_key: z.string(),
  srt_url: z.string(),
});

export const LIVE_TARGETS = {
  'ImageFlux_20200316.CreateMultistreamChannelWithHLS': {
    request: z.object({ hls: RenditionLadder, encrypt_key_uri: optionalHttpUrl(), ...webhooks }),
    response: CreatedChannel,
  },
  'ImageFlux_20200316.CreateMultistreamChannel': {
    request: z.object(webhooks),
    response: CreatedChannel,
  },
  'ImageFlux_20200207.ListPlaylistURLs': {
    request: z.object({ channel_id: channelId() }),
    response: z.object({
      channel_id: z.string(),
      hls: z.array(z.object({ connection_id: z.string(), playlist_url: z.string() })),
    }),
  },
  'ImageFlux_20180501.DeleteChannel': {
    request: z.object({ channel_id: channelId() }),
    response: z.object({}),
  },
  'ImageFlux_20200729.ListChannelIDs': {
    request: z.object({}),
    response: z.object({ channel_ids: z.array(z.string()) }),
  },
  'ImageFlux_20190205.CreateArchiveDestination': {
    request: z.object({
      /** `s3://bucket` or `s3://bucket/prefix`. */
      bucket_uri: text(1024).regex(/^s3:\/\/[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](\/.*)?$/, 'validation.invalid'),
      aws_end_point: optionalHttpUrl(),
      aws_region: text(64).default(''),
      aws_access_key_id: text(256).default(''),
      aws_secret_access_key: text(256).default(''),
    }),
    response: z.object({ archive_destination_id: z.string() }),
  },
  'ImageFlux_20190205.DeleteArchiveDestination': {
    request: z.object({ archive_destination_id: text(64).min(1, 'validation.required') }),
    response: z.object({}),
  },
  'ImageFlux_20190205.ListArchiveDestinations': {
    request: z.object({}),
    response: z.object({
      archive_destinations: z.array(z.object({ archive_destination_id: z.string(), bucket_uri: z.string() })),
    }),
  },
  'Ukiyo_20261125.CreatePlaybackToken': {
    request: z.object({
      channel_id: channelId(),
      expires_in_seconds: integer(10, MAX_PLAYBACK_TOKEN_SECONDS).default(3600),
    }),
    response: z.object({ channel_id: z.string(), token: z.string(), expires_at: z.string() }),
  },
  'ImageFlux_20200707.GetEncryptKey': {
    request: z.object({ kid: text(64).min(1, 'validation.required') }),
    response: z.object({ encrypt_key: z.string().regex(/^[0-9a-f]{32}$/) }),
  },
} as const;

export type LiveTarget = keyof typeof LIVE_TARGETS;
export type LiveRequest<T extends LiveTarget> = z.output<(typeof LIVE_TARGETS)[T]['request']>;
export type LiveResponse<T extends LiveTarget> = z.input<(typeof LIVE_TARGETS)[T]['response']>;

export function isLiveTarget(value: string): value is LiveTarget {
  return Object.hasOwn(LIVE_TARGETS, value);
}

/** The error body of the live API: `invalids` maps field paths to message references. */
export const LiveErrorResponse = z.object({
  ok: z.literal(false),
  error: z.string(),
  invalids: z.record(z.string(), z.array(z.string())).optional(),
});

/** The playlist segments' key URI: `{uri}?kid=` or `{uri}&kid=` when it already has a query. */
export function encryptKeyUrl(uri: string, kid: string): string {
  return `${uri}${uri.includes('?') ? '&' : '?'}kid=${encodeURIComponent(kid)}`;
}

/** Sora signaling's limit on one SDP (an offer of ours or a client's answer). */
const sdp = () =>
  z
    .string()
    .min(1)
    .max(64 * 1024);

/** `audio` / `video` of a connect message: on or off, or a codec and its parameters. */
const SoraMedia = z.union([z.boolean(), z.object({ codec_type: z.string().max(16).optional() })]);

/**
 * Sora signaling (the WebSocket at `sora_url`): the client's first message. Fields of the
 * Sora protocol this service does not use (simulcast, spotlight, data channels...) are accepted
 * and ignored; `metadata.access_token` carries the publisher's bearer, as WHIP's header does.
 */
export const SoraConnectMessage = z.object({
  type: z.literal('connect'),
  role: z.enum(['sendonly', 'recvonly', 'sendrecv']),
  channel_id: channelId(),
  // sora-js-sdk sends `metadata: null` when given none (a viewer without a playback token).
  metadata: z.looseObject({ access_token: z.string().max(4096).optional() }).nullish(),
  audio: SoraMedia.optional(),
  video: SoraMedia.optional(),
  sdp: sdp().optional(),
  sora_client: z.string().max(256).optional(),
});
export type SoraConnectMessage = z.infer<typeof SoraConnectMessage>;

/** What a connected Sora client may send next. */
export const SoraClientMessage = z.discriminatedUnion('type', [
  z.object({ type: z.literal('answer'), sdp: sdp() }),
  z.object({ type: z.literal('re-answer'), sdp: sdp() }),
  z.object({
    type: z.literal('candidate'),
    candidate: z.string().max(1024),
    sdpMid: z.string().max(64).nullish(),
    sdpMLineIndex: z.number().int().min(0).max(64).nullish(),
  }),
  z.object({ type: z.literal('pong') }),
  z.object({ type: z.literal('stats') }),
  z.object({ type: z.literal('disconnect'), reason: z.string().max(256).optional() }),
]);
export type SoraClientMessage = z.infer<typeof SoraClientMessage>;
