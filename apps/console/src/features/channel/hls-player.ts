import type { HlsConfig, LoaderConfig } from 'hls.js';

/**
 * How a playlist is loaded and retried. A live process without room for another viewer keeps a
 * newcomer's request up to 3 s, then answers 503 with `Retry-After: 2`, and once a crowd has
 * thinned it takes them: hls.js's own defaults give up on a refused master playlist after a
 * single retry a second later, and on a media playlist after two. Here a refused playlist is asked
 * again after 2, 4, 8, 8 and 8 s. The times are finite: the bench hands this config to a page as
 * JSON, which has no Infinity.
 */
const PLAYLIST_LOADING: { default: LoaderConfig } = {
  default: {
    maxTimeToFirstByteMs: 10_000,
    maxLoadTimeMs: 20_000,
    timeoutRetry: { maxNumRetry: 2, retryDelayMs: 0, maxRetryDelayMs: 0 },
    errorRetry: { maxNumRetry: 5, retryDelayMs: 2_000, maxRetryDelayMs: 8_000 },
  },
};

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
  manifestLoadPolicy: PLAYLIST_LOADING,
  playlistLoadPolicy: PLAYLIST_LOADING,
} as const satisfies Partial<HlsConfig>;
