import { resolve } from 'node:path';
import { z } from 'zod';

const flag = z
  .enum(['0', '1', 'true', 'false', ''])
  .default('0')
  .transform((value) => value === '1' || value === 'true');
const port = (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback);
const optionalUrl = z
  .string()
  .optional()
  .transform((value) => (value ? value : undefined))
  .pipe(z.url().optional());

/** The runtime contract of docs/architecture.md, parsed once at start-up. */
const ConfigFields = z.object({
  PORT: port(8080),
  EDGE_PORT: port(8081),
  /** HTTPS image delivery for custom domains with an uploaded certificate (chosen by SNI). */
  EDGE_TLS_PORT: port(8443),
  EDGE_DOMAIN: z.string().min(1).default('img.localhost'),
  /**
   * How clients reach the edge, `{host}` standing for an origin's host name, e.g.
   * `https://{host}` behind a TLS proxy. Unset: `http://{host}:{EDGE_PORT}`.
   */
  EDGE_PUBLIC_URL: z
    .string()
    .optional()
    .refine((value) => !value || value.includes('{host}'), 'must contain {host}'),
  LIVE_PORT: port(8082),
  /** The live server's public address for the URLs it reports (playlists); unset: http://localhost:{LIVE_PORT}. */
  LIVE_PUBLIC_URL: optionalUrl,
  /**
   * How the other live processes reach this one (e.g. `http://live-1:8082`), when several run
   * behind one LIVE_PUBLIC_URL: a viewer's HLS request reaching a process that does not hold
   * the channel's publisher is passed on to the one that does. Unset: one live process.
   */
  LIVE_INTERNAL_URL: optionalUrl,
  /**
   * UDP ports WebRTC media flows on, `first-last` (e.g. `40000-40199`: one per peer connection,
   * publisher or viewer, and host address it announces), for a firewall or container that
   * publishes a fixed range. Unset: any free port.
   */
  LIVE_ICE_PORT_RANGE: z
    .string()
    .optional()
    .transform((value, ctx) => {
      if (!value) return undefined;
      const match = /^(\d{1,5})-(\d{1,5})$/.exec(value);
      const range = match && ([Number(match[1]), Number(match[2])] as [number, number]);
      if (!range || range[0] < 1024 || range[1] > 65535 || range[0] > range[1]) {
        ctx.addIssue({ code: 'custom', message: 'must be first-last, within 1024-65535' });
        return z.NEVER;
      }
      return range;
    }),
  /**
   * Addresses announced to publishers besides the interfaces' own, comma-separated: the public
   * address of a host behind NAT or of a container's host. 127.0.0.1 is always announced.
   */
  LIVE_ICE_ADDRESSES: z
    .string()
    .default('')
    .transform((value) =>
      value
        .split(',')
        .map((address) => address.trim())
        .filter(Boolean),
    ),
  /** RTMP ingest (`rtmp://{LIVE_PUBLIC_URL host}:{port}/live/{stream key}`). */
  LIVE_RTMP_PORT: port(1935),
  /**
   * RTMPS ingest: RTMP in TLS with this certificate and key (PEM files), for encoders that
   * publish to `rtmps://`. Unset: no RTMPS.
   */
  LIVE_RTMPS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  LIVE_RTMPS_CERT_FILE: z.string().optional(),
  LIVE_RTMPS_KEY_FILE: z.string().optional(),
  /** SRT ingest, UDP (`srt://{LIVE_PUBLIC_URL host}:{port}?streamid={channel_id}&passphrase=...`). */
  LIVE_SRT_PORT: port(8890),
  /**
   * A live process's viewer process busier than this (0 to 1, over the last 3 s) refuses new
   * WebRTC viewers (503, Retry-After) until it is not, and its main thread (over the last 1 s)
   * new HLS clients: past it every viewer there falls behind together. 1 takes every viewer.
   */
  LIVE_MAX_EVENT_LOOP_UTILIZATION: z.coerce.number().min(0).max(1).default(0.85),
  /**
   * Child processes a live process runs its WebRTC viewers in (their peer connections, SRTP and
   * sends), each admitting and shedding by its own load; unset: one per core. 0 runs them in
   * the live process itself, beside ingest and HLS.
   */
  LIVE_VIEWER_PROCESSES: z.coerce.number().int().min(0).max(64).optional(),
  /** LIVE_VIEWER_PROCESSES's name before viewers ran in processes: read when that is unset. */
  LIVE_VIEWER_THREADS: z.coerce.number().int().min(0).max(64).optional(),
  HOST: z.string().default('0.0.0.0'),
  DATA_DIR: z.string().default('./data'),
  DATABASE_URL: optionalUrl,
  REDIS_URL: optionalUrl,
  BOOTSTRAP_ADMIN_EMAIL: z.string().optional(),
  BOOTSTRAP_ADMIN_PASSWORD: z.string().optional(),
  ALLOW_PRIVATE_ORIGINS: flag,
  SMTP_URL: optionalUrl,
  /** base64 of 32 bytes: encrypts secrets at rest. Unset: generated once in DATA_DIR/secret.key. */
  SECRET_KEY: z.string().optional(),
  MAIL_FROM: z.string().default('Ukiyo <no-reply@ukiyo.localhost>'),
  DEMO: flag,
  /** The console's public address when behind a proxy (cookie Secure flag, CSRF origin check). */
  PUBLIC_URL: optionalUrl,
  /** Trust X-Forwarded-For / X-Forwarded-Proto from the proxy in front. */
  TRUST_PROXY: flag,
  STATUS_URL: optionalUrl,
  /** Where the help centre's contact form is delivered. */
  SUPPORT_EMAIL: z.email().default('support@ukiyo.localhost'),
  SESSION_IDLE_MINUTES: z.coerce.number().int().min(1).default(120),
  SESSION_ABSOLUTE_HOURS: z.coerce.number().int().min(1).default(24),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Per process: GET /metrics (Prometheus), /healthz, /readyz. Keep it off the public network. */
  METRICS_PORT: port(9464),
  /** On SIGTERM/SIGINT, how long requests in flight may take to finish before they are cut. */
  SHUTDOWN_GRACE_SECONDS: z.coerce.number().int().min(0).max(600).default(20),
  /** /readyz fails when DATA_DIR (and the edge cache) has less free disk than this. */
  READY_MIN_FREE_MB: z.coerce.number().int().min(0).default(100),
  /** The edge's limit on one origin fetch; past it a stale copy is served, else 504. */
  EDGE_ORIGIN_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
  /** The edge's disk cache of variants; least recently used ones go past it. Size it to the volume. */
  EDGE_CACHE_MAX_MB: z.coerce.number().int().min(1).default(2048),
  /** Variants the disk cache indexes at most (each costs about 300 bytes of heap); the oldest go past it. */
  EDGE_CACHE_MAX_ENTRIES: z.coerce.number().int().min(1).default(200_000),
  /** Variant bytes also held in memory for hits. */
  EDGE_MEMORY_CACHE_MB: z.coerce.number().int().min(0).default(64),
  /**
   * Edge processes sharing EDGE_PORT and the cache directory (`npm run start:edge`); 1 runs
   * the edge in the process itself. Transform concurrency and the memory cache are per worker.
   */
  EDGE_WORKERS: z.coerce.number().int().min(1).max(64).default(1),
  /** Share of successful delivery requests written to the access log, 0 to 1 (failures always are). */
  EDGE_ACCESS_LOG_SAMPLE: z.coerce.number().min(0).max(1).default(1),
  /**
   * Transforms one edge runs at once; each takes one libuv thread, so UV_THREADPOOL_SIZE must
   * exceed it (the edge keeps two threads for cache reads, lookups and probes).
   */
  EDGE_TRANSFORM_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(4),
  /** Transforms waiting for a slot, in all (one tenant takes at most half); past it 503. */
  EDGE_TRANSFORM_QUEUE: z.coerce.number().int().min(0).max(10_000).default(32),
  /** How long a transform may wait for a slot; past it 503 with Retry-After. */
  EDGE_TRANSFORM_WAIT_MS: z.coerce.number().int().min(0).max(120_000).default(10_000),
  /** One transform's deadline, counted in whole seconds by sharp; past it 503 with Retry-After. 0: none. */
  EDGE_TRANSFORM_TIMEOUT_MS: z.coerce.number().int().min(0).max(600_000).default(10_000),
  /**
   * What one transform may cost, estimated from the image headers before decoding, in units
   * of about 1 ms of one core (packages/imaging budget.ts); past it 422. 0: no limit.
   */
  EDGE_TRANSFORM_BUDGET: z.coerce.number().int().min(0).default(3_000),
  /** Frames an animated GIF or WebP may have to be converted as an animation; more: 422. */
  EDGE_MAX_FRAMES: z.coerce.number().int().min(1).max(100_000).default(1_000),
  /**
   * The edges' shared result cache on S3-compatible storage, on when the bucket is set: a variant
   * one edge converted is another's GET. Operator configuration (no SSRF guard); unset keys use
   * the SDK's credential chain; unset endpoint is AWS itself.
   */
  RESULT_CACHE_S3_BUCKET: z.string().default(''),
  RESULT_CACHE_S3_ENDPOINT: optionalUrl,
  RESULT_CACHE_S3_REGION: z.string().default('us-east-1'),
  RESULT_CACHE_S3_ACCESS_KEY_ID: z.string().default(''),
  RESULT_CACHE_S3_SECRET_ACCESS_KEY: z.string().default(''),
  /** Key prefix inside the bucket (several fleets, or other data, in one bucket). */
  RESULT_CACHE_S3_PREFIX: z.string().default(''),
  /** A shared tier lookup that takes longer falls through to transforming. */
  RESULT_CACHE_S3_TIMEOUT_MS: z.coerce.number().int().min(10).max(10_000).default(200),
  /** Public (cache) API calls per token and minute; past it 429 until the minute ends. */
  PUBLIC_API_RATE_PER_MINUTE: z.coerce.number().int().min(1).default(120),
  /** Platform API (/api/v1) calls per token and minute: a budget of its own, apart from the cache API's. */
  API_V1_RATE_PER_MINUTE: z.coerce.number().int().min(1).default(600),
  /** Live API calls per token and minute (ListPlaylistURLs polled every second is 60). */
  LIVE_API_RATE_PER_MINUTE: z.coerce.number().int().min(1).default(300),
  /** WHIP offers and DELETEs per token and minute: a budget of their own, apart from the live API's. */
  WHIP_RATE_PER_MINUTE: z.coerce.number().int().min(1).default(60),
  /**
   * How long a console server waits over Redis for every edge to answer a cache call, and for
   * every console server to confirm an invalidation (Invalidations).
   */
  CACHE_CALL_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(3_000),
});

const ConfigSchema = ConfigFields.refine(
  (config) =>
    config.LIVE_RTMPS_PORT === undefined || (config.LIVE_RTMPS_CERT_FILE && config.LIVE_RTMPS_KEY_FILE),
  { path: ['LIVE_RTMPS_PORT'], message: 'needs LIVE_RTMPS_CERT_FILE and LIVE_RTMPS_KEY_FILE' },
).refine((config) => !config.RESULT_CACHE_S3_ACCESS_KEY_ID === !config.RESULT_CACHE_S3_SECRET_ACCESS_KEY, {
  path: ['RESULT_CACHE_S3_ACCESS_KEY_ID'],
  message: 'needs RESULT_CACHE_S3_SECRET_ACCESS_KEY too (or neither, for the SDK credential chain)',
});

export type Config = Omit<z.infer<typeof ConfigSchema>, 'DATA_DIR'> & { DATA_DIR: string };

/** Fails fast with every bad variable named. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = ConfigSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `  ${issue.path.join('.')}: ${issue.message}`);
    throw new Error(`invalid environment:\n${problems.join('\n')}`);
  }
  return { ...parsed.data, DATA_DIR: resolve(parsed.data.DATA_DIR) };
}
