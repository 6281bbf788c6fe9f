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
import { AccessLog, RequestIds } from './access-log.ts';
import { serverNameOf, type HitRequest, type HotAnswer } from './hot-socket.ts';
import { clientAddress } from './acl.ts';
import {
  DiskCache,
  indexedMeta,
  type IndexedMeta,
  type Revalidation,
  type VariantMeta,
} from './cache/disk-cache.ts';
import type { SharedTier } from './cache/shared-tier.ts';
import { SourceCache } from './cache/source-cache.ts';
import { ACCEPT_CH, applyClientHints } from './client-hints.ts';
import { surrogateKeys } from './surrogate-keys.ts';
import { Coalescer } from './coalesce.ts';
import { contentTag } from './content-tag.ts';
import type { EdgeMetrics } from './metrics.ts';
import type { CacheResult, Delivery, Metering } from './metering.ts';
import {
  OriginError,
  type FetchedImage,
  type OriginHeaders,
  type OriginValidators,
  type Unchanged,
} from './origins/errors.ts';
import type { HttpFetcher } from './origins/http.ts';
import { hostName, type EdgeOrigin, type OriginRegistry } from './origins/registry.ts';
import type { S3Fetcher } from './origins/s3.ts';
import { Overloaded, TransformQueue, type TransformQueueOptions } from './transform-queue.ts';

interface Variant {
  meta: IndexedMeta;
  data: Buffer;
  stale?: boolean;
  /** The origin forbids storing it: passed on to the client too. */
  noStore?: boolean;
  /** Found in the fleet's shared tier: a hit, though not this edge's. */
  shared?: boolean;
  /** Made by another request's conversion this one waited for. */
  coalesced?: boolean;
  /** The stored copy, fresh again: the origin answered that its original is unchanged. */
  revalidated?: boolean;
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
  /** For a CDN in front: its origin and its source image, as surrogate-keys.ts names them. */
  surrogateKeys: { spaced: string; commas: string };
  /** The normalised parameters, as the analytics count transformations. */
  transform: string;
}

/**
 * A request resolved once, remembered by its raw Host and URL so that the same request again
 * is answered from memory without parsing, rules or digests (the hit path). What depends on
 * more than the URL is checked again each time: the client's address against the ACL, the
 * signature header against the one verified, the expiry against the clock, and a format
 * chain's choice against Accept. Origins with client hints are not remembered.
 */
interface Memo {
  /** The registry's generation it was resolved in: any origin change forgets every memo. */
  generation: number;
  resolved: Resolved;
  /** The signature header that was verified (signed origins). */
  signature: string | undefined;
  /** Variant id by format chain choice ('' without a chain). */
  ids: Map<string, string>;
  /** The answer's headers for one variant in one second (they carry the time left). */
  block?: HeaderBlock;
}

interface HeaderBlock {
  meta: IndexedMeta;
  second: number;
  /** For ServerResponse.writeHead. */
  list: Array<string | number>;
  /** For the hot path: `Name: value` lines, each ending in CRLF. */
  lines: string;
  /** Every value is one node:http would write. */
  writable: boolean;
}

/** A request answered from memory; node:http or the hot path writes it. */
interface MemoryHit {
  status: 200 | 304;
  block: HeaderBlock;
  requestId: string;
  body: Buffer;
  bodyless: boolean;
}

/** Memos kept; the oldest is dropped past it (a URL seen once costs one entry, briefly). */
const MEMO_LIMIT = 20_000;

const SAFE_SEGMENT = /(?:^|\/)\.{1,2}(?:\/|$)/;

/**
 * The delivery request path, in this order: host to origin, ACL, signature, grammar and origin
 * rules, expiry, then the cache; a miss fetches the source (coalesced) and transforms it
 * (bounded concurrency). Input problems are 4xx with a short reason, origin problems 502/504.
 */
export class EdgeHandler {
  private readonly variants = new Coalescer<Variant>();
  private readonly sources = new Coalescer<FetchedImage | Unchanged>();
  private readonly recentSources = new SourceCache({
    maxTtlMs: 10_000,
    probationMs: 2_000,
    maxBytes: 64 * 1024 ** 2,
  });
  private readonly transforms: TransformQueue;
  private readonly memos = new Map<string, Memo>();
  private readonly requestIds = new RequestIds();
  /** Batched: flushed on shutdown. */
  readonly accessLog: AccessLog;

  constructor(
    private readonly deps: {
      registry: OriginRegistry;
      cache: DiskCache;
      /** The fleet's shared result cache (RESULT_CACHE_S3_*), when configured. */
      shared?: SharedTier;
      http: HttpFetcher;
      s3: S3Fetcher;
      metering: Metering;
      log: Logger;
      trustProxy: boolean;
      limits: TransformLimits;
      queue: TransformQueueOptions;
      metrics: EdgeMetrics;
      /** Share of successful requests written to the access log (0 to 1). */
      accessLogSample: number;
      /** Repeated requests answered by answerFromMemory. */
      hitPath: boolean;
      /** Answers /healthz and /readyz on a Host that is no origin's (load balancer probes). */
      probe?: (path: string) => Promise<{ status: number; body: unknown }>;
    },
  ) {
    this.transforms = new TransformQueue(deps.queue);
    this.accessLog = new AccessLog(deps.log, deps.accessLogSample);
  }

  /** Transforms waiting for a slot, and running. */
  get transformQueue(): { queued: number; running: number } {
    return { queued: this.transforms.queued, running: this.transforms.running };
  }

  /** Bytes of recently fetched originals held for their next variants. */
  get sourceBytes(): number {
    return this.recentSources.heldBytes;
  }

  /** Requests node:http parsed (over TLS, or not for the hot path): a hit, else the full path. */
  readonly listener = (req: IncomingMessage, res: ServerResponse): void => {
    const started = performance.now();
    const view = hitRequestOf(req);
    if (misdirected(view)) {
      res.writeHead(421, { 'content-type': 'text/plain; charset=utf-8' }).end('misdirected request');
      return;
    }
    const hit = this.deps.hitPath ? this.answerFromMemory(view, started) : undefined;
    if (hit) {
      const headers = hit.block.list.slice();
      headers.push('X-Request-Id', hit.requestId);
      if (hit.status === 200) headers.push('Content-Length', hit.body.length);
      res.writeHead(hit.status, headers);
      res.end(hit.bodyless ? undefined : hit.body);
      return;
    }
    const requestId = this.requestIdOf(view);
    res.setHeader('X-Request-Id', requestId);
    let origin: EdgeOrigin | null = null;
    const delivery: Delivery = { status: 0, bytes: 0 };
    const send = (status: number, headers: Record<string, string | number>, body: Buffer | string) => {
      const data = typeof body === 'string' ? Buffer.from(body) : body;
      const bodyless = req.method === 'HEAD' || status === 304;
      delivery.bytes = bodyless ? 0 : data.length;
      // Public images: any page may read them with fetch() (the preview tester measures bytes,
      // customers' own scripts do too), not only show them in <img>.
      const all = { ...CORS_HEADERS, ...headers };
      res.writeHead(status, status === 304 ? all : { 'Content-Length': data.length, ...all });
      res.end(bodyless ? undefined : data);
    };
    const refuse = (status: number, code: EdgeErrorCode, reason: string, retryAfterSeconds?: number) => {
      delivery.error = code;
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
    };

    res.on('finish', () => {
      delivery.status = res.statusCode;
      this.record(view, delivery, started, requestId, origin);
    });

    const probe = this.deps.probe;
    if (probe && (req.url === '/healthz' || req.url === '/readyz')) {
      if (!this.deps.registry.forHost(req.headers.host ?? '')) {
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

    this.serve(req, view, (found) => {
      origin = found;
    })
      .then(({ variant, cache, resolved }) => {
        Object.assign(delivery, deliveredImage(cache, resolved, variant.meta));
        const headers = variantHeaders(variant, resolved, Date.now(), CACHE_HEADER[cache]);
        if (matchesEtag(req.headers['if-none-match'], variant.meta.etag)) return send(304, headers, EMPTY);
        send(200, headers, variant.data);
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

  /** Requests the hot path read off the socket (hot-socket.ts): a hit, else undefined. */
  readonly hotAnswer: HotAnswer = (req) => {
    if (misdirected(req)) return undefined;
    const hit = this.answerFromMemory(req, performance.now());
    if (hit) this.deps.metrics.answeredOnSocket();
    return (
      hit && {
        status: hit.status,
        headers: `${hit.block.lines}X-Request-Id: ${hit.requestId}\r\n`,
        body: hit.body,
        bodyless: hit.bodyless,
      }
    );
  };

  /**
   * The hit path: a request resolved before (a memo) whose variant is fresh in memory is
   * answered from it, with headers formatted once a second, and recorded. Undefined when the
   * request needs the full path; the full path gives the same answer to anything answered
   * here (test/hit-path.int.test.ts).
   */
  private answerFromMemory(req: HitRequest, started: number): MemoryHit | undefined {
    const memo = this.memos.get(`${req.host}\n${req.url}`);
    if (!memo || memo.generation !== this.deps.registry.generation) return undefined;
    const { resolved } = memo;
    const { origin, params } = resolved;
    if (req.method !== 'GET' && req.method !== 'HEAD') return undefined;
    if (!origin.acl.empty && !origin.acl.allows(this.clientOf(req))) return undefined;
    if (origin.enableSignedUrl && req.signature !== memo.signature) return undefined;
    const now = Date.now();
    if (params.expires !== undefined && isExpired(params.expires, new Date(now))) return undefined;
    const id = memo.ids.get(String(chainChoice(params.f, req.accept) ?? ''));
    const held = id === undefined ? undefined : this.deps.cache.hotVariant(id);
    if (!held || held.meta.freshUntil <= now) return undefined;
    const second = Math.floor(now / 1000);
    if (memo.block?.meta !== held.meta || memo.block.second !== second)
      memo.block = headerBlock(held.meta, second, variantHeaders(held, resolved, now, 'HIT'));
    // Headers node:http would refuse to write are the full path's to refuse.
    if (!memo.block.writable) return undefined;
    const requestId = this.requestIdOf(req);
    const notModified = matchesEtag(req.ifNoneMatch, held.meta.etag);
    const bodyless = notModified || req.method === 'HEAD';
    const delivery = deliveredImage('memory', resolved, held.meta);
    delivery.status = notModified ? 304 : 200;
    delivery.bytes = bodyless ? 0 : held.data.length;
    this.record(req, delivery, started, requestId, origin, now);
    return { status: delivery.status as 200 | 304, block: memo.block, requestId, body: held.data, bodyless };
  }

  /** The caller's (a proxy's) id when it looks like one, else ours: one id across the logs. */
  private requestIdOf(req: HitRequest): string {
    const incoming = req.requestId;
    return incoming !== undefined && REQUEST_ID.test(incoming) ? incoming : this.requestIds.next();
  }

  /** Usage and analytics, metrics and the access log line of one answered request. */
  private record(
    req: HitRequest,
    delivery: Delivery,
    started: number,
    requestId: string,
    origin: EdgeOrigin | null,
    now = Date.now(),
  ): void {
    if (origin) this.deps.metering.record(origin.id, origin.organizationId, delivery, now);
    const ms = performance.now() - started;
    const cache = delivery.cache ? CACHE_HEADER[delivery.cache] : '-';
    this.deps.metrics.answered(delivery.status, cache, ms / 1000);
    this.accessLog.write({
      time: now,
      reqId: requestId,
      method: req.method,
      host: req.host,
      url: req.url,
      status: delivery.status,
      bytes: delivery.bytes,
      ms: Math.round(ms * 10) / 10,
      cache,
      client: req.remoteAddress,
    });
  }

  private clientOf(req: HitRequest): string {
    return clientAddress(req.remoteAddress, req.forwardedFor, this.deps.trustProxy);
  }

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
    const urls = remove
      ? await this.purge(origin.id, ruled.imagePath)
      : await this.deps.cache.urlsOf(origin.id, ruled.imagePath);
    return { imagePath: ruled.imagePath, urls };
  }

  /**
   * Removes every variant of one source image from every tier (the shared one first, so that a
   * request between the two finds neither) and forgets its original; returns the URLs this
   * edge held. A shared tier that fails is logged, and the local purge goes on.
   */
  async purge(originId: number, imagePath: string): Promise<string[]> {
    this.forgetSources(originId);
    await this.deps.shared
      ?.purge(originId, imagePath)
      .catch((error: unknown) => this.deps.log.warn({ err: error, originId }, 'shared tier purge failed'));
    return this.deps.cache.purge(originId, imagePath);
  }

  /**
   * Removes every variant of the origin's images whose path starts with `pathPrefix` (empty:
   * all of the origin) from every tier, the shared one first, and forgets its originals;
   * returns how many images this edge held. A shared tier that fails is logged, and the local
   * purge goes on.
   */
  async purgePrefix(originId: number, pathPrefix: string): Promise<number> {
    this.forgetSources(originId);
    const everything = pathPrefix === '' || pathPrefix === '/';
    const { shared, cache } = this.deps;
    await (everything ? shared?.purgeOrigin(originId) : shared?.purgePrefix(originId, pathPrefix))?.catch(
      (error: unknown) => this.deps.log.warn({ err: error, originId }, 'shared tier purge failed'),
    );
    return everything ? cache.purgeOrigin(originId) : cache.purgePrefix(originId, pathPrefix);
  }

  /** Removes every variant of a deleted origin, in the background. */
  purgeOrigin(originId: number): void {
    this.forgetSources(originId);
    for (const tier of [this.deps.cache, this.deps.shared])
      tier
        ?.purgeOrigin(originId)
        .catch((error: unknown) => this.deps.log.warn({ err: error, originId }, 'cache purge failed'));
  }

  private async serve(
    req: IncomingMessage,
    view: HitRequest,
    onOrigin: (origin: EdgeOrigin) => void,
  ): Promise<{ variant: Variant; cache: CacheResult; resolved: Resolved }> {
    if (req.method !== 'GET' && req.method !== 'HEAD')
      throw new Refusal(405, 'method-not-allowed', 'method not allowed');
    const hostHeader = req.headers.host ?? '';
    const origin = this.deps.registry.forHost(hostHeader);
    if (!origin) throw new Refusal(404, 'unknown-host', 'unknown host');
    onOrigin(origin);
    const resolved = this.resolve(req, view, origin);
    const hot = this.deps.cache.hotVariant(resolved.id);
    const cached = hot ?? (await this.deps.cache.load(resolved.id));
    if (cached && cached.meta.freshUntil > Date.now())
      return { variant: cached, cache: hot ? 'memory' : 'disk', resolved };
    const url = `http://${hostHeader}${req.url ?? '/'}`;
    try {
      const variant = await this.produce(resolved, req.headers.accept, url, cached);
      return { variant, cache: producedBy(variant, hot !== undefined), resolved };
    } catch (error) {
      // The origin failing (not refusing) is when a stale copy beats an error page, for as long
      // as its stale-if-error allows.
      if (
        cached &&
        error instanceof OriginError &&
        error.kind !== 'not-found' &&
        (cached.meta.staleUntil ?? Infinity) > Date.now()
      ) {
        this.deps.log.warn({ err: error, url }, 'origin failed; serving a stale copy');
        return { variant: { ...cached, stale: true }, cache: 'stale', resolved };
      }
      throw error;
    }
  }

  private resolve(req: IncomingMessage, view: HitRequest, origin: EdgeOrigin): Resolved {
    if (!origin.acl.allows(this.clientOf(view))) throw new Refusal(403, 'access-denied', 'access denied');
    const rawUrl = req.url ?? '/';
    const query = rawUrl.indexOf('?');
    const rawPath = query < 0 ? rawUrl : rawUrl.slice(0, query);
    if (!rawPath.startsWith('/')) throw new Refusal(400, 'bad-path', 'bad request path');
    const { signature } = view;
    if (origin.enableSignedUrl && !verifySignature(origin.signingSecret, rawPath, signature))
      throw new Refusal(403, 'invalid-signature', 'invalid signature');
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
    const choice = String(chainChoice(params.f, req.headers.accept) ?? '');
    const transform = printParams(params, { omitAccess: true });
    const variantKey = [transform, choice, origin.sourceDigest].join('|');
    const id = DiskCache.idOf(origin.id, imagePath, variantKey);
    const resolved = {
      origin,
      params,
      imagePath,
      sourcePath,
      id,
      varyHints,
      surrogateKeys: surrogateKeys(origin.id, imagePath),
      transform,
    };
    if (this.deps.hitPath && !origin.clientHints) this.remember(req, resolved, signature, choice);
    return resolved;
  }

  private remember(
    req: IncomingMessage,
    resolved: Resolved,
    signature: string | undefined,
    choice: string,
  ): void {
    const key = `${req.headers.host}\n${req.url}`;
    const generation = this.deps.registry.generation;
    const known = this.memos.get(key);
    if (known?.generation === generation && known.signature === signature) {
      known.ids.set(choice, resolved.id);
      return;
    }
    if (this.memos.size >= MEMO_LIMIT) this.memos.delete(this.memos.keys().next().value!);
    this.memos.set(key, { generation, resolved, signature, ids: new Map([[choice, resolved.id]]) });
  }

  /**
   * The variant made (or found in the shared tier), or `stored`, a stale copy, made fresh again
   * when the origin answers that its original is unchanged.
   */
  private produce(
    resolved: Resolved,
    accept: string | undefined,
    url: string,
    stored: { meta: IndexedMeta; data: Buffer } | undefined,
  ): Promise<Variant> {
    const { origin, params } = resolved;
    const tenant = String(origin.organizationId);
    const coalesced = this.variants.isRunning(resolved.id);
    const made = this.variants.run(resolved.id, async () => {
      const shared = await this.deps.shared?.load(resolved.id);
      if (shared) {
        await this.keep(resolved.id, shared.meta, shared.data);
        return { meta: indexedMeta(shared.meta), data: shared.data, shared: true };
      }
      const revalidation = stored && (await this.deps.cache.revalidationOf(resolved.id));
      let changed: FetchedImage | undefined;
      if (stored && revalidation) {
        const answer = await this.fetchSource(origin, resolved.sourcePath, revalidation.validators);
        if ('unchanged' in answer) return this.refresh(resolved, url, stored, revalidation, answer);
        changed = answer;
      }
      const refused = this.transforms.refusal(tenant);
      if (refused) throw refused;
      const source = changed ?? (await this.fetchSource(origin, resolved.sourcePath));
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
      const { freshness, revalidation: next, noStore, maxAge } = freshnessOf(origin, source);
      const meta: IndexedMeta = {
        contentType: result.contentType,
        etag: contentTag(result.data),
        varyAccept: result.varyAccept,
        sourceBytes: source.data.length,
        ...freshness,
      };
      if (!noStore) {
        const kept = { url, imagePath: resolved.imagePath, ...meta, revalidation: next };
        await this.keep(resolved.id, kept, result.data);
        // Shared off the answer's path; a variant already stale is of no use to another edge.
        if (maxAge > 0) this.deps.shared?.store(resolved.id, kept, result.data);
      }
      return { meta, data: result.data, noStore };
    });
    return coalesced ? made.then((variant) => ({ ...variant, coalesced: true })) : made;
  }

  /**
   * A stale variant whose original the origin says is unchanged (304), fresh again by what the
   * origin says now; headers the answer leaves out are those of the original it was made from
   * (RFC 9111 4.3.4). Written back when that makes it fresh for a while.
   */
  private async refresh(
    resolved: Resolved,
    url: string,
    stored: { meta: IndexedMeta; data: Buffer },
    revalidation: Revalidation,
    answer: Unchanged,
  ): Promise<Variant> {
    const headers: OriginHeaders = {
      cacheControl: answer.cacheControl ?? revalidation.cacheControl,
      expires: answer.expires ?? revalidation.expires,
      age: answer.age ?? null,
      date: answer.date ?? null,
      validators: { ...revalidation.validators, ...answer.validators },
    };
    const { freshness, revalidation: next, noStore, maxAge } = freshnessOf(resolved.origin, headers);
    const { staleUntil: _staleUntil, ...kept } = stored.meta;
    const meta: IndexedMeta = { ...kept, ...freshness };
    // A copy stale again at once (`no-cache`) is left as it is: the next request asks again.
    if (!noStore && maxAge > 0)
      await this.keep(
        resolved.id,
        { url, imagePath: resolved.imagePath, ...meta, revalidation: next },
        stored.data,
      );
    return { meta, data: stored.data, noStore, revalidated: true };
  }

  /**
   * The original at `path`; with `ifChanged`, or that the origin's own is still that version. An
   * original fetched in the last seconds (`recentSources`) answers for the origin.
   */
  private fetchSource(origin: EdgeOrigin, path: string): Promise<FetchedImage>;
  private fetchSource(
    origin: EdgeOrigin,
    path: string,
    ifChanged: OriginValidators,
  ): Promise<FetchedImage | Unchanged>;
  private async fetchSource(
    origin: EdgeOrigin,
    path: string,
    ifChanged?: OriginValidators,
  ): Promise<FetchedImage | Unchanged> {
    const { source } = origin;
    const key = `${origin.id}|${origin.version}|${path}`;
    const held = this.recentSources.get(key);
    if (held) {
      if (!ifChanged || !isVersion(held.validators, ifChanged)) return held;
      const { data: _data, ...headers } = held;
      return { ...headers, unchanged: true };
    }
    // Conditional fetches of one version share their answer (a srcset's widths gone stale together).
    const run = ifChanged ? `${key}|${ifChanged.etag ?? ''}|${ifChanged.lastModified ?? ''}` : key;
    return this.sources.run(run, async () => {
      const stop = this.deps.metrics.originFetch.startTimer({ kind: source.kind });
      let image: FetchedImage | Unchanged;
      try {
        image =
          source.kind === 'http'
            ? await this.deps.http.fetch(source.config, path, ifChanged)
            : await this.deps.s3.fetch(source.config, path, ifChanged);
      } catch (error) {
        stop({ outcome: error instanceof OriginError ? error.kind : 'error' });
        throw error;
      }
      if ('unchanged' in image) {
        stop({ outcome: 'unchanged' });
        return image;
      }
      stop({ outcome: 'ok' });
      this.deps.metering.originFetched(origin.id, origin.organizationId, image.data.length);
      this.recentSources.put(key, origin.id, image, policyOf(origin, image, Date.now()).maxAge * 1000);
      return image;
    });
  }

  /** Into the disk cache (and memory); a failed write only costs a later miss. */
  private keep(id: string, meta: VariantMeta, data: Buffer): Promise<void> {
    return this.deps.cache.put(id, meta, data).catch((error: unknown) => {
      this.deps.log.warn({ err: error, url: meta.url }, 'cache write failed');
    });
  }

  /** After a purge: the next request fetches the original again. */
  private forgetSources(originId: number): void {
    this.recentSources.forgetOrigin(originId);
  }
}

const EMPTY = Buffer.alloc(0);

/** The X-Cache value (and access log and metrics label) of each cache result. */
const CACHE_HEADER: Record<CacheResult, string> = {
  memory: 'HIT',
  disk: 'HIT',
  shared: 'HIT',
  miss: 'MISS',
  coalesced: 'MISS',
  stale: 'STALE',
};

const formats = new Map<string, string>();

/** `image/webp` -> `webp`, `image/svg+xml` -> `svg`: the output format as analytics name it. */
function formatOf(contentType: string): string {
  let format = formats.get(contentType);
  if (format === undefined) {
    format = (contentType.split(';')[0]!.split('/')[1] ?? contentType).split('+')[0]!.trim();
    if (formats.size < 64) formats.set(contentType, format);
  }
  return format;
}

/** What the analytics count of an image answered (its status and bytes are the answer's). */
function deliveredImage(cache: CacheResult, resolved: Resolved, meta: IndexedMeta): Delivery {
  return {
    status: 0,
    bytes: 0,
    cache,
    sourceBytes: meta.sourceBytes,
    format: formatOf(meta.contentType),
    path: resolved.imagePath,
    transform: resolved.transform,
  };
}
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

/** Whether the original held is of `version`, judged as the origin would (http.ts conditionOf). */
function isVersion(held: OriginValidators | undefined, version: OriginValidators): boolean {
  if (version.etag) return held?.etag === version.etag;
  return version.lastModified !== undefined && held?.lastModified === version.lastModified;
}

/** Where a variant made or found for a request came from, as the analytics count it. */
function producedBy(variant: Variant, storedInMemory: boolean): CacheResult {
  if (variant.shared) return 'shared';
  // Before `coalesced`: a request that waited for another's revalidation is answered the copy too.
  if (variant.revalidated) return storedInMemory ? 'memory' : 'disk';
  if (variant.coalesced) return 'coalesced';
  return 'miss';
}

/** How long what the origin sent may be kept, by its headers or else the origin's defaultCache. */
function policyOf(origin: EdgeOrigin, image: OriginHeaders, now: number) {
  return cachePolicy({
    now: new Date(now),
    defaultCacheSeconds: origin.defaultCache,
    originCacheControl: image.cacheControl,
    originExpires: image.expires,
    originAge: image.age,
    originDate: image.date,
  });
}

/**
 * A variant's freshness from what the origin said of its original, and what to ask the origin
 * with once it is stale (when the origin named the original's version).
 */
function freshnessOf(origin: EdgeOrigin, headers: OriginHeaders) {
  const now = Date.now();
  const policy = policyOf(origin, headers, now);
  const freshUntil = now + policy.maxAge * 1000;
  const { validators, cacheControl, expires } = headers;
  return {
    freshness: {
      freshUntil,
      ...(policy.staleIfError === undefined ? {} : { staleUntil: freshUntil + policy.staleIfError * 1000 }),
    },
    revalidation: validators && ({ validators, cacheControl, expires } satisfies Revalidation),
    noStore: policy.cacheControl === 'no-store',
    maxAge: policy.maxAge,
  };
}

/** A variant's answer headers at `now`: its lifetime left, capped by the URL's expiry. */
function variantHeaders(
  variant: Variant,
  resolved: Resolved,
  now: number,
  cacheStatus: string,
): Record<string, string | number> {
  const { meta } = variant;
  let seconds = variant.stale ? 0 : Math.max(0, Math.round((meta.freshUntil - now) / 1000));
  const expires = resolved.params.expires;
  if (expires !== undefined) seconds = Math.min(seconds, Math.max(0, expires - Math.floor(now / 1000)));
  const headers: Record<string, string | number> = {
    'Content-Type': meta.contentType,
    ETag: meta.etag,
    'Cache-Control': variant.noStore ? 'no-store' : seconds > 0 ? `public, max-age=${seconds}` : 'no-cache',
    Expires: new Date(now + seconds * 1000).toUTCString(),
    'X-Cache': cacheStatus,
    'Surrogate-Key': resolved.surrogateKeys.spaced,
    'Cache-Tag': resolved.surrogateKeys.commas,
  };
  const vary = [...(meta.varyAccept ? ['Accept'] : []), ...resolved.varyHints];
  if (vary.length > 0) headers.Vary = vary.join(', ');
  if (resolved.origin.clientHints) headers['Accept-CH'] = ACCEPT_CH;
  return headers;
}

/** What a hit reads of a request node:http parsed (hot-socket.ts reads the same off a socket). */
function hitRequestOf(req: IncomingMessage): HitRequest {
  const { headers } = req;
  const header = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);
  return {
    method: req.method,
    url: req.url,
    host: headers.host,
    accept: headers.accept,
    ifNoneMatch: headers['if-none-match'],
    signature: header(headers['x-imageflux-signature']),
    forwardedFor: header(headers['x-forwarded-for']),
    requestId: header(headers['x-request-id']),
    remoteAddress: req.socket.remoteAddress,
    servername: serverNameOf(req.socket),
  };
}

/**
 * Over TLS the Host must be the name the handshake was for: one tenant's certificate never
 * fronts another origin (421).
 */
function misdirected({ servername, host }: HitRequest): boolean {
  if (servername === undefined) return false;
  return servername === '' || hostName(host ?? '') !== hostName(servername);
}

/** Characters node:http refuses in a header value. */
const UNWRITABLE = /[^\t\x20-\x7e\x80-\xff]/;

/** One variant's answer headers for one second, as node:http takes them and as raw lines. */
function headerBlock(
  meta: IndexedMeta,
  second: number,
  headers: Record<string, string | number>,
): HeaderBlock {
  const all = Object.entries({ ...CORS_HEADERS, ...headers });
  return {
    meta,
    second,
    list: all.flat(),
    lines: all.map(([name, value]) => `${name}: ${value}\r\n`).join(''),
    writable: all.every(([, value]) => !UNWRITABLE.test(String(value))),
  };
}

function matchesEtag(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(',').some((tag) => {
    const trimmed = tag.trim();
    return trimmed === '*' || trimmed === etag || trimmed === `W/${etag}`;
  });
}
