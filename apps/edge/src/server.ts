import { createHash, randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  applyRules,
  cachePolicy,
  chainChoice,
  ImagingError,
  isExpired,
  printParams,
  splitPath,
  transform,
  verifySignature,
  type ImagingErrorCode,
  type ParsedParams,
  type TransformLimits,
} from '@ukiyo/imaging';
import type { Logger } from 'pino';
import { clientAddress } from './acl.ts';
import { DiskCache, type VariantMeta } from './cache/disk-cache.ts';
import { SourceCache } from './cache/source-cache.ts';
import { ACCEPT_CH, applyClientHints } from './client-hints.ts';
import { Coalescer } from './coalesce.ts';
import type { EdgeMetrics } from './metrics.ts';
import type { Metering } from './metering.ts';
import { OriginError, type FetchedImage } from './origins/errors.ts';
import type { HttpFetcher } from './origins/http.ts';
import type { EdgeOrigin, OriginRegistry } from './origins/registry.ts';
import type { S3Fetcher } from './origins/s3.ts';
import { Overloaded, TransformQueue, type TransformQueueOptions } from './transform-queue.ts';

interface Variant {
  meta: VariantMeta;
  data: Buffer;
  stale?: boolean;
  /** The origin forbids storing it: passed on to the client too. */
  noStore?: boolean;
}

/** A refusal answered as plain text; never logged as a failure of the service. */
class Refusal extends Error {
  constructor(
    readonly status: number,
    readonly code: RefusalCode,
    message: string,
  ) {
    super(message);
  }
}

/** A request resolved to one variant of one source image. */
interface Resolved {
  origin: EdgeOrigin;
  params: ParsedParams;
  /** Inside the origin, percent-encoded as sent, after origin rules. */
  imagePath: string;
  /** Decoded form of imagePath, what is fetched. */
  sourcePath: string;
  id: string;
  /** Client hint headers the variant depends on (with clientHints), for `Vary`. */
  varyHints: string[];
}

const SAFE_SEGMENT = /(?:^|\/)\.{1,2}(?:\/|$)/;

/**
 * The delivery request path, in this order: host to origin, ACL, signature, grammar and origin
 * rules, expiry, then the cache; a miss fetches the source (coalesced) and transforms it
 * (bounded concurrency). Input problems are 4xx with a short reason, origin problems 502/504.
 */
export class EdgeHandler {
  private readonly variants = new Coalescer<Variant>();
  private readonly sources = new Coalescer<FetchedImage>();
  private readonly recentSources = new SourceCache({ maxTtlMs: 10_000, maxBytes: 64 * 1024 ** 2 });
  private readonly transforms: TransformQueue;

  constructor(
    private readonly deps: {
      registry: OriginRegistry;
      cache: DiskCache;
      http: HttpFetcher;
      s3: S3Fetcher;
      metering: Metering;
      log: Logger;
      trustProxy: boolean;
      limits: TransformLimits;
      queue: TransformQueueOptions;
      metrics: EdgeMetrics;
      /** Answers /healthz and /readyz on a Host that is no origin's (load balancer probes). */
      probe?: (path: string) => Promise<{ status: number; body: unknown }>;
    },
  ) {
    this.transforms = new TransformQueue(deps.queue);
  }

  /** Transforms waiting for a slot, and running. */
  get transformQueue(): { queued: number; running: number } {
    return { queued: this.transforms.queued, running: this.transforms.running };
  }

  readonly listener = (req: IncomingMessage, res: ServerResponse): void => {
    const started = process.hrtime.bigint();
    // The caller's (a proxy's) id when it looks like one, else ours: one id across the logs.
    const incomingId = req.headers['x-request-id'];
    const requestId =
      typeof incomingId === 'string' && REQUEST_ID.test(incomingId) ? incomingId : randomUUID();
    res.setHeader('X-Request-Id', requestId);
    let originId: number | null = null;
    let organizationId = 0;
    let bytes = 0;
    let cacheStatus = '-';
    const send = (status: number, headers: Record<string, string | number>, body: Buffer | string) => {
      const data = typeof body === 'string' ? Buffer.from(body) : body;
      const bodyless = req.method === 'HEAD' || status === 304;
      bytes = bodyless ? 0 : data.length;
      // Public images: any page may read them with fetch() (the preview tester measures bytes,
      // customers' own scripts do too), not only show them in <img>.
      const all = { ...CORS_HEADERS, ...headers };
      res.writeHead(status, status === 304 ? all : { 'Content-Length': data.length, ...all });
      res.end(bodyless ? undefined : data);
    };
    const refuse = (status: number, code: EdgeErrorCode, reason: string, retryAfterSeconds?: number) =>
      send(
        status,
        {
          'Content-Type': 'text/plain; charset=utf-8',
          'Cache-Control': 'no-store',
          'X-Content-Type-Options': 'nosniff',
          [ERROR_CODE_HEADER]: code,
          'Access-Control-Expose-Headers': `${ERROR_CODE_HEADER}, Retry-After`,
          ...(retryAfterSeconds === undefined ? {} : { 'Retry-After': retryAfterSeconds }),
        },
        `${reason}\n`,
      );

    res.on('finish', () => {
      if (originId !== null) this.deps.metering.record(originId, organizationId, bytes);
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      this.deps.metrics.requests.inc({ status: res.statusCode, cache: cacheStatus });
      this.deps.metrics.duration.observe({ cache: cacheStatus }, ms / 1000);
      if (this.deps.log.isLevelEnabled('info')) {
        this.deps.log.info(
          {
            reqId: requestId,
            method: req.method,
            host: req.headers.host,
            url: req.url,
            status: res.statusCode,
            bytes,
            ms: Math.round(ms * 10) / 10,
            cache: cacheStatus,
            client: req.socket.remoteAddress,
          },
          'edge request',
        );
      }
    });

    const probe = this.deps.probe;
    if (probe && (req.url === '/healthz' || req.url === '/readyz')) {
      const host = (req.headers.host ?? '').replace(/:\d+$/, '').toLowerCase();
      if (!this.deps.registry.forHost(host)) {
        probe(req.url)
          .then(({ status, body }) =>
            send(
              status,
              { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' },
              JSON.stringify(body),
            ),
          )
          .catch(() => refuse(500, 'internal', 'internal error'));
        return;
      }
    }

    this.serve(req, (origin) => {
      originId = origin.id;
      organizationId = origin.organizationId;
    })
      .then(({ variant, hit, resolved }) => {
        cacheStatus = variant.stale ? 'STALE' : hit ? 'HIT' : 'MISS';
        if (hit) this.deps.metrics.cacheHits.inc();
        else this.deps.metrics.cacheMisses.inc();
        this.answer(req, send, variant, resolved, cacheStatus);
      })
      .catch((error: unknown) => {
        if (error instanceof Refusal) return refuse(error.status, error.code, error.message);
        if (error instanceof Overloaded) {
          this.deps.metrics.refusedTransforms.inc({ reason: error.reason });
          return refuse(503, 'overloaded', error.message, error.retryAfterSeconds);
        }
        if (error instanceof ImagingError) {
          if (error.code === 'too-costly' || error.code === 'timeout')
            this.deps.metrics.refusedTransforms.inc({ reason: error.code });
          return refuse(error.status, error.code, error.message, error.code === 'timeout' ? 1 : undefined);
        }
        if (error instanceof OriginError) {
          // The detail (an address, a status, the S3 error) is the origin owner's business: logged
          // with the request id, answered in general terms.
          this.deps.log.info(
            { reqId: requestId, host: req.headers.host, detail: error.message },
            'origin fetch failed',
          );
          return refuse(ORIGIN_STATUS[error.kind], `origin-${error.kind}`, ORIGIN_REASON[error.kind]);
        }
        this.deps.log.error(
          { err: error, reqId: requestId, url: req.url, host: req.headers.host },
          'edge request failed',
        );
        if (res.headersSent) res.destroy();
        else refuse(500, 'internal', 'internal error');
      });
  };

  /** The variants cached for one image URL (or a path of the origin). */
  async variantUrls(
    originId: number,
    urlOrPath: string,
    remove: boolean,
  ): Promise<{ imagePath: string; urls: string[] } | null> {
    let origin = this.deps.registry.forId(originId);
    if (!origin) {
      await this.deps.registry.refresh();
      origin = this.deps.registry.forId(originId);
    }
    if (!origin) return null;
    let path = urlOrPath;
    if (/^https?:\/\//i.test(path)) path = new URL(path).pathname;
    if (!path.startsWith('/')) path = `/${path}`;
    const split = splitPath(path);
    if (!split.ok) return null;
    const ruled = applyRules(split, origin.ruleSet);
    if (!ruled.ok) return null;
    if (remove) this.forgetSources(origin.id);
    const urls = remove
      ? await this.deps.cache.purge(origin.id, ruled.imagePath)
      : this.deps.cache
          .entriesOf(origin.id, ruled.imagePath)
          .map((entry) => entry.url)
          .sort();
    return { imagePath: ruled.imagePath, urls };
  }

  private async serve(
    req: IncomingMessage,
    onOrigin: (origin: EdgeOrigin) => void,
  ): Promise<{ variant: Variant; hit: boolean; resolved: Resolved }> {
    if (req.method !== 'GET' && req.method !== 'HEAD')
      throw new Refusal(405, 'method-not-allowed', 'method not allowed');
    const hostHeader = req.headers.host ?? '';
    const origin = this.deps.registry.forHost(hostHeader.replace(/:\d+$/, '').toLowerCase());
    if (!origin) throw new Refusal(404, 'unknown-host', 'unknown host');
    onOrigin(origin);
    const resolved = this.resolve(req, origin);
    const now = Date.now();
    const entry = this.deps.cache.get(resolved.id);
    if (entry && entry.freshUntil > now) {
      return { variant: { meta: entry, data: await this.deps.cache.read(entry) }, hit: true, resolved };
    }
    const url = `http://${hostHeader}${req.url ?? '/'}`;
    try {
      return { variant: await this.produce(resolved, req.headers.accept, url), hit: false, resolved };
    } catch (error) {
      // The origin failing (not refusing) is when a stale copy beats an error page.
      if (entry && error instanceof OriginError && error.kind !== 'not-found') {
        this.deps.log.warn({ err: error, url }, 'origin failed; serving a stale copy');
        return {
          variant: { meta: entry, data: await this.deps.cache.read(entry), stale: true },
          hit: true,
          resolved,
        };
      }
      throw error;
    }
  }

  private resolve(req: IncomingMessage, origin: EdgeOrigin): Resolved {
    const client = clientAddress(
      req.socket.remoteAddress,
      req.headers['x-forwarded-for'],
      this.deps.trustProxy,
    );
    if (!origin.acl.allows(client)) throw new Refusal(403, 'access-denied', 'access denied');
    const rawUrl = req.url ?? '/';
    const query = rawUrl.indexOf('?');
    const rawPath = query < 0 ? rawUrl : rawUrl.slice(0, query);
    if (!rawPath.startsWith('/')) throw new Refusal(400, 'bad-path', 'bad request path');
    if (origin.enableSignedUrl) {
      const header = req.headers['x-imageflux-signature'];
      if (!verifySignature(origin.signingSecret, rawPath, Array.isArray(header) ? header[0] : header))
        throw new Refusal(403, 'invalid-signature', 'invalid signature');
    }
    const split = splitPath(rawPath);
    if (!split.ok) throw new Refusal(400, 'bad-parameter', split.reason);
    const ruled = applyRules(split, origin.ruleSet);
    if (!ruled.ok) throw new Refusal(400, 'bad-parameter', ruled.reason);
    const { imagePath } = ruled;
    const { params, vary: varyHints } = origin.clientHints
      ? applyClientHints(ruled.params, req.headers)
      : { params: ruled.params, vary: [] };
    if (isExpired(params.expires, new Date())) throw new Refusal(403, 'expired', 'expired');
    if (params.t && !origin.allowText)
      throw new Refusal(403, 'text-disabled', 'text overlays are not enabled for this organization');
    let sourcePath: string;
    try {
      sourcePath = decodeURIComponent(imagePath);
    } catch {
      throw new Refusal(400, 'bad-path', 'malformed percent-encoding in the image path');
    }
    if (sourcePath === '/' || sourcePath.includes('\0') || SAFE_SEGMENT.test(sourcePath))
      throw new Refusal(400, 'bad-path', 'bad image path');
    // Hints already are parameters; a fallback chain adds the element Accept selects.
    const variantKey = [
      printParams(params, { omitAccess: true }),
      chainChoice(params.f, req.headers.accept) ?? '',
      origin.sourceDigest,
    ].join('|');
    const id = DiskCache.idOf(origin.id, imagePath, variantKey);
    return { origin, params, imagePath, sourcePath, id, varyHints };
  }

  private produce(resolved: Resolved, accept: string | undefined, url: string): Promise<Variant> {
    const { origin, params } = resolved;
    const tenant = String(origin.organizationId);
    return this.variants.run(resolved.id, async () => {
      const refused = this.transforms.refusal(tenant);
      if (refused) throw refused;
      const source = await this.fetchSource(origin, resolved.sourcePath);
      const result = await this.transforms.run(tenant, source.data.length, async () => {
        const stop = this.deps.metrics.transform.startTimer();
        try {
          return await transform({
            source: source.data,
            params,
            accept,
            loadOverlay: async (path) => (await this.fetchSource(origin, path)).data,
            allowText: origin.allowText,
            allowSvg: origin.allowSvg,
            limits: this.deps.limits,
          });
        } finally {
          stop();
        }
      });
      const now = Date.now();
      const policy = cachePolicy({
        now: new Date(now),
        defaultCacheSeconds: origin.defaultCache,
        originCacheControl: source.cacheControl,
        originExpires: source.expires,
      });
      const meta: VariantMeta = {
        url,
        contentType: result.contentType,
        etag: `"${createHash('sha256').update(result.data).digest('base64url').slice(0, 27)}"`,
        varyAccept: result.varyAccept,
        freshUntil: now + policy.maxAge * 1000,
      };
      if (policy.cacheControl !== 'no-store') {
        await this.deps.cache.put(resolved.id, meta, result.data).catch((error: unknown) => {
          this.deps.log.warn({ err: error, url }, 'cache write failed');
        });
      }
      return { meta, data: result.data, noStore: policy.cacheControl === 'no-store' };
    });
  }

  private async fetchSource(origin: EdgeOrigin, path: string): Promise<FetchedImage> {
    const { source } = origin;
    const key = `${origin.id}|${origin.version}|${path}`;
    const held = this.recentSources.get(key);
    if (held) return held;
    return this.sources.run(key, async () => {
      const stop = this.deps.metrics.originFetch.startTimer({ kind: source.kind });
      let image: FetchedImage;
      try {
        image =
          source.kind === 'http'
            ? await this.deps.http.fetch(source.config, path)
            : await this.deps.s3.fetch(source.config, path);
        stop({ outcome: 'ok' });
      } catch (error) {
        stop({ outcome: error instanceof OriginError ? error.kind : 'error' });
        throw error;
      }
      const { maxAge } = cachePolicy({
        now: new Date(),
        defaultCacheSeconds: origin.defaultCache,
        originCacheControl: image.cacheControl,
        originExpires: image.expires,
      });
      this.recentSources.put(key, origin.id, image, maxAge * 1000);
      return image;
    });
  }

  /** After a purge: the next request fetches the original again. */
  forgetSources(originId: number): void {
    this.recentSources.forgetOrigin(originId);
  }

  private answer(
    req: IncomingMessage,
    send: (status: number, headers: Record<string, string | number>, body: Buffer) => void,
    variant: Variant,
    resolved: Resolved,
    cacheStatus: string,
  ): void {
    const { meta } = variant;
    const now = Date.now();
    let seconds = variant.stale ? 0 : Math.max(0, Math.round((meta.freshUntil - now) / 1000));
    const expires = resolved.params.expires;
    if (expires !== undefined) seconds = Math.min(seconds, Math.max(0, expires - Math.floor(now / 1000)));
    const headers: Record<string, string | number> = {
      'Content-Type': meta.contentType,
      ETag: meta.etag,
      'Cache-Control': variant.noStore ? 'no-store' : seconds > 0 ? `public, max-age=${seconds}` : 'no-cache',
      Expires: new Date(now + seconds * 1000).toUTCString(),
      'X-Cache': cacheStatus,
    };
    const vary = [...(meta.varyAccept ? ['Accept'] : []), ...resolved.varyHints];
    if (vary.length > 0) headers.Vary = vary.join(', ');
    if (resolved.origin.clientHints) headers['Accept-CH'] = ACCEPT_CH;
    if (matchesEtag(req.headers['if-none-match'], meta.etag)) return send(304, headers, EMPTY);
    send(200, headers, variant.data);
  }
}

const EMPTY = Buffer.alloc(0);
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const CORS_HEADERS = { 'Access-Control-Allow-Origin': '*', 'Timing-Allow-Origin': '*' };

/**
 * Every refusal names its kind in this header (the body is a short English reason for people
 * reading logs or curl): the console's preview translates the code, and scripts can branch on it
 * without parsing text.
 */
export const ERROR_CODE_HEADER = 'Ukiyo-Error';

type RefusalCode =
  | 'method-not-allowed'
  | 'unknown-host'
  | 'access-denied'
  | 'bad-path'
  | 'bad-parameter'
  | 'invalid-signature'
  | 'expired'
  | 'text-disabled';

type EdgeErrorCode =
  RefusalCode | ImagingErrorCode | `origin-${OriginError['kind']}` | 'overloaded' | 'internal';

const ORIGIN_STATUS: Record<OriginError['kind'], number> = {
  'not-found': 404,
  forbidden: 502,
  failed: 502,
  timeout: 504,
  'too-large': 422,
};

const ORIGIN_REASON: Record<OriginError['kind'], string> = {
  'not-found': 'image not found at the origin',
  forbidden: 'the origin address is not allowed',
  failed: 'the origin could not be fetched',
  timeout: 'the origin did not answer in time',
  'too-large': 'the origin image is too large',
};

function matchesEtag(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(',').some((tag) => {
    const trimmed = tag.trim();
    return trimmed === '*' || trimmed === etag || trimmed === `W/${etag}`;
  });
}
