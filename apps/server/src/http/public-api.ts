import {
  Permission,
  PublicCacheRequest,
  PublicCacheResponse,
  PublicPurgeResponse,
  TokenInfoResponse,
} from '@ukiyo/contract';
import type { Context, Hono, MiddlewareHandler } from 'hono';
import { principalHolds, resolveBearer, type TokenPrincipal } from '../auth/api-tokens.ts';
import { checkPublishCredential, isPublishCredential } from '../auth/publish-credentials.ts';
import type { RateLimits, RateRule, Verdict } from '../auth/rate-limits.ts';
import type { ServerDeps } from '../operations/context.ts';
import { prefixPurgeSubject, purgeSubject, recordConfigurationChange } from '../services/audit-trail.ts';
import { originOfUrl } from '../services/cache.ts';
import { clientAddress } from './request.ts';

type PublicEnv = { Variables: { principal: TokenPrincipal } };

/** Guessing tokens: wrong or missing bearer tokens per client address. */
export const BAD_TOKENS_PER_ADDRESS: RateRule = { points: 20, seconds: 15 * 60 };

/**
 * Counts one bad credential against its client address: API tokens, publish credentials, RTMP
 * stream keys and SRT stream ids and passphrases share the address's BAD_TOKENS_PER_ADDRESS.
 */
export function countBadCredential(limits: RateLimits, address: string): Promise<Verdict> {
  return limits.take('api-bad-token', BAD_TOKENS_PER_ADDRESS, address);
}

/**
 * Each token has one budget per API, so polling the live API cannot use up the calls a
 * publisher needs for WHIP (its DELETE included), nor either the cache API's.
 */
export type TokenBudget = 'public' | 'live' | 'whip' | 'v1';

const CALLS_PER_MINUTE = {
  public: 'PUBLIC_API_RATE_PER_MINUTE',
  live: 'LIVE_API_RATE_PER_MINUTE',
  whip: 'WHIP_RATE_PER_MINUTE',
  v1: 'API_V1_RATE_PER_MINUTE',
} as const satisfies Record<TokenBudget, keyof ServerDeps['config']>;

/** What the bearer check needs of the server's deps (the live app has only these). */
export type BearerDeps = Pick<ServerDeps, 'db' | 'config' | 'limits'>;

/** The RateLimit header fields (IETF httpapi draft), with Retry-After when refused. */
export function rateLimitHeaders(c: Context, verdict: Verdict): void {
  const seconds = String(Math.max(1, Math.ceil(verdict.msBeforeNext / 1000)));
  c.header('RateLimit-Limit', String(verdict.limit));
  c.header('RateLimit-Remaining', String(verdict.remaining));
  c.header('RateLimit-Reset', seconds);
  if (!verdict.allowed) c.header('Retry-After', seconds);
}

type Resolution =
  { principal: TokenPrincipal } | { principal?: undefined; refused: 401 | 403; error: string };

/** The encoded API token of an Authorization header value, one indexed read. */
export async function tokenOf(deps: BearerDeps, authorization: string | undefined): Promise<Resolution> {
  return resolutionOf(await resolveBearer(deps.db, authorization));
}

/** The bearer check's start: the token's principal, or a refusal when there is none. */
export function resolutionOf(principal: TokenPrincipal | undefined): Resolution {
  return principal ? { principal } : { refused: 401, error: 'invalid or missing API token' };
}

/** A bearer check's outcome, whatever carried the bearer (a header, a signaling message). */
export type Authorization =
  | { principal: TokenPrincipal; verdict: Verdict }
  | { principal?: undefined; status: 401 | 403 | 429; error: string; verdict?: Verdict };

/**
 * The checks after the bearer's resolution. A valid principal is never refused for what others
 * sent from its address: bad or missing bearers (401) count only against their address
 * (BAD_TOKENS_PER_ADDRESS, then 429 for further bad ones), and a valid principal only against
 * its own budget for this API, per minute, in memory or Redis (see RateLimits), never the
 * database.
 */
export async function authorize(
  deps: BearerDeps,
  permission: number,
  budget: TokenBudget,
  resolved: Resolution,
  address: () => string,
): Promise<Authorization> {
  if (!resolved.principal) {
    const { refused, error } = resolved;
    if (refused === 401) {
      const verdict = await countBadCredential(deps.limits, address());
      if (!verdict.allowed) return { status: 429, error: 'too many requests', verdict };
    }
    return { status: refused, error };
  }
  const { principal } = resolved;
  const perToken: RateRule = { points: deps.config[CALLS_PER_MINUTE[budget]], seconds: 60 };
  const verdict = await deps.limits.take(`api-token:${budget}`, perToken, principal.limitKey);
  if (!verdict.allowed) return { status: 429, error: 'too many requests', verdict };
  if (!principalHolds(principal, permission)) {
    return { status: 403, error: 'the API token lacks the permission for this call', verdict };
  }
  return { principal, verdict };
}

/** `authorize` as middleware around `resolve`: failures answer `{ok: false, error}`. */
function guarded(
  deps: BearerDeps,
  permission: number,
  budget: TokenBudget,
  resolve: (c: Context) => Promise<Resolution>,
): MiddlewareHandler<PublicEnv> {
  return async (c, next) => {
    const result = await authorize(deps, permission, budget, await resolve(c), () =>
      clientAddress(c, deps.config),
    );
    if (result.verdict) rateLimitHeaders(c, result.verdict);
    if (!result.principal) {
      if (result.status === 401) c.header('WWW-Authenticate', 'Bearer');
      return c.json({ ok: false, error: result.error }, result.status);
    }
    c.set('principal', result.principal);
    await next();
  };
}

/**
 * Bearer-token authentication for the public APIs (cache, live, WHIP): an encoded API token of
 * the organization, holding `permission`, looked up first.
 */
export function bearerAuth(
  deps: BearerDeps,
  permission: number,
  budget: TokenBudget,
): MiddlewareHandler<PublicEnv> {
  return guarded(deps, permission, budget, (c) => tokenOf(deps, c.req.header('authorization')));
}

/** What WHIP's check needs: the bearer check's deps and the key publish credentials are signed under. */
export type PublishAuthDeps = BearerDeps & Pick<ServerDeps, 'secrets'>;

/**
 * A publisher's bearer for a channel: an API token holding the live permission, as bearerAuth
 * takes it, or a publish credential the console issued for that channel (publish-credentials.ts),
 * which has a WHIP budget of its own as a token has.
 */
async function publisherOf(deps: PublishAuthDeps, bearer: string | undefined, channelId: string) {
  if (!bearer || !isPublishCredential(bearer)) return tokenOf(deps, bearer && `Bearer ${bearer}`);
  const check = await checkPublishCredential(deps.db, deps.secrets, bearer, channelId);
  if (check.principal) return check;
  return check.refused === 'another channel'
    ? { refused: 403 as const, error: 'the publish credential is for another channel' }
    : { refused: 401 as const, error: 'invalid or expired publish credential' };
}

/** WHIP's check on `/whip/{channel}…`, the bearer in the Authorization header. */
export function publishAuth(deps: PublishAuthDeps): MiddlewareHandler<PublicEnv> {
  return guarded(deps, Permission.channel, 'whip', (c) => {
    const bearer = /^Bearer\s+(\S+)$/i.exec(c.req.header('authorization') ?? '')?.[1];
    return publisherOf(deps, bearer, c.req.param('channel') ?? '');
  });
}

/**
 * WHIP's check for a publisher whose bearer comes another way (Sora signaling's
 * `metadata.access_token`), from `address`, on the same budgets.
 */
export async function authorizePublisher(
  deps: PublishAuthDeps,
  bearer: string | undefined,
  channelId: string,
  address: string,
): Promise<Authorization> {
  return authorize(
    deps,
    Permission.channel,
    'whip',
    await publisherOf(deps, bearer, channelId),
    () => address,
  );
}

/**
 * The body's image URL, the token organization's origin it names and the edges' cache; or the
 * refusal to answer, its body completed by `empty` (what the call answers when it found nothing).
 */
async function cacheTarget(c: Context<PublicEnv>, deps: ServerDeps, empty: object) {
  const refuse = (error: string, status: 400 | 404 | 503) => ({
    refused: c.json({ ok: false, error, ...empty }, status),
  });
  let body: unknown;
  try {
    body = await c.req.json();
  } catch {
    return refuse('the body must be JSON: {"url": "..."}', 400);
  }
  const parsed = PublicCacheRequest.safeParse(body);
  if (!parsed.success) return refuse('url is required (at most 4096 characters)', 400);
  const { url } = parsed.data;
  const originId = await originOfUrl(deps.db, c.get('principal').organizationId, url);
  if (originId === undefined) return refuse('url must be an absolute image URL of one of your origins', 404);
  const control = deps.cacheControl;
  if (!control) return refuse('the image cache cannot be reached', 503);
  return { url, originId, control, refuse };
}

/** A purge made with the token, in the organization's audit trail. */
function recordTokenPurge(
  c: Context<PublicEnv>,
  deps: ServerDeps,
  operation: string,
  purge: { name: string; state: Record<string, unknown> },
) {
  const principal = c.get('principal');
  return recordConfigurationChange(
    { deps },
    {
      actor: { userId: null, email: '', ip: clientAddress(c, deps.config), token: principal.token },
      organizationId: principal.organizationId,
      operation,
      kind: 'cache',
      subject: purge.name,
      before: undefined,
      after: purge.state,
    },
  );
}

/** Redis or an edge away (fleet): the caller retries; nothing was half done on our side. */
function cacheFailed(c: Context<PublicEnv>, deps: ServerDeps, error: unknown) {
  deps.log.warn({ err: error, reqId: c.get('requestId') }, 'cache call failed');
}

async function cacheRequest(c: Context<PublicEnv>, deps: ServerDeps, remove: boolean) {
  const target = await cacheTarget(c, deps, { urls: [] });
  if ('refused' in target) return target.refused;
  const { url, originId, control, refuse } = target;
  let urls: string[];
  try {
    urls = remove ? await control.purge(originId, url) : await control.lookup(originId, url);
  } catch (error) {
    cacheFailed(c, deps, error);
    return refuse('the image cache cannot be reached', 503).refused;
  }
  if (remove) await recordTokenPurge(c, deps, 'cache.delete', purgeSubject(originId, url, urls));
  return c.json(PublicCacheResponse.parse({ ok: true, urls }));
}

/** Every image of the origin under the URL's path (`https://{host}/` : all of them). */
async function prefixPurgeRequest(c: Context<PublicEnv>, deps: ServerDeps) {
  const target = await cacheTarget(c, deps, { images: 0 });
  if ('refused' in target) return target.refused;
  const { url, originId, control, refuse } = target;
  const pathPrefix = new URL(url).pathname;
  let images: number;
  try {
    images = await control.purgePrefix(originId, pathPrefix);
  } catch (error) {
    cacheFailed(c, deps, error);
    return refuse('the image cache cannot be reached', 503).refused;
  }
  await recordTokenPurge(c, deps, 'cache.purge_prefix', prefixPurgeSubject(originId, pathPrefix, images));
  return c.json(PublicPurgeResponse.parse({ ok: true, images }));
}

/** The public API under /api: cache lookup and delete, token info (documented by openapi.ts). */
export function mountPublicApi(app: Hono, deps: ServerDeps): void {
  const api = app.basePath('/api') as unknown as Hono<PublicEnv>;
  api.post('/cache.lookup', bearerAuth(deps, Permission.cache, 'public'), (c) =>
    cacheRequest(c, deps, false),
  );
  api.post('/cache.delete', bearerAuth(deps, Permission.cache, 'public'), (c) => cacheRequest(c, deps, true));
  api.post('/cache.purge_prefix', bearerAuth(deps, Permission.cache, 'public'), (c) =>
    prefixPurgeRequest(c, deps),
  );
  api.post('/token.info', bearerAuth(deps, 0, 'public'), (c) => {
    const principal = c.get('principal');
    return c.json(
      TokenInfoResponse.parse({
        ok: true,
        organizationID: principal.organizationId,
        permission: principal.permission,
      }),
    );
  });
}
