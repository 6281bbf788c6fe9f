import type { HlsConfig } from 'hls.js';

/**
 * hls.js as the channel screen plays a channel (and bench/live-llhls.ts measures it). Its target
 * distance from the live edge stays its own: the playlist's PART-HOLD-BACK (three parts) for
 * Low-Latency HLS, three target durations for plain HLS. Setting liveSyncDurationCount or
 * liveSyncDuration here would replace PART-HOLD-BACK, and hold a low-latency channel two whole
 * segments behind. After a stall (a busy decoder, a late part) hls.js plays a little faster
 * until it is back at that distance, instead of staying behind for good.
 */
export const HLS_PLAYER_CONFIG = {
  lowLatencyMode: true,
  maxLiveSyncPlaybackRate: 1.5,
} as const satisfies Partial<HlsConfig>;
