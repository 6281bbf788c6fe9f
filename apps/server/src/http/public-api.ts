import {
  Permission,
  PublicCacheRequest,
  PublicCacheResponse,
  PublicErrorResponse,
  TokenInfoResponse,
} from '@ukiyo/contract';
import type { Context, Hono, MiddlewareHandler } from 'hono';
import { z } from 'zod';
import { principalHolds, resolveBearer, type TokenPrincipal } from '../auth/api-tokens.ts';
import { checkPublishCredential, isPublishCredential } from '../auth/publish-credentials.ts';
import type { RateLimits, RateRule, Verdict } from '../auth/rate-limits.ts';
import type { ServerDeps } from '../operations/context.ts';
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
export type TokenBudget = 'public' | 'live' | 'whip';

const CALLS_PER_MINUTE = {
  public: 'PUBLIC_API_RATE_PER_MINUTE',
  live: 'LIVE_API_RATE_PER_MINUTE',
  whip: 'WHIP_RATE_PER_MINUTE',
} as const satisfies Record<TokenBudget, keyof ServerDeps['config']>;

/** What the bearer check needs of the server's deps (the live app has only these). */
export type BearerDeps = Pick<ServerDeps, 'db' | 'config' | 'limits'>;

/** The RateLimit header fields (IETF httpapi draft), with Retry-After when refused. */
function rateLimitHeaders(c: Context, verdict: Verdict): void {
  const seconds = String(Math.max(1, Math.ceil(verdict.msBeforeNext / 1000)));
  c.header('RateLimit-Limit', String(verdict.limit));
  c.header('RateLimit-Remaining', String(verdict.remaining));
  c.header('RateLimit-Reset', seconds);
  if (!verdict.allowed) c.header('Retry-After', seconds);
}

type Resolution =
  { principal: TokenPrincipal } | { principal?: undefined; refused: 401 | 403; error: string };

/** The encoded API token of an Authorization header value, one indexed read. */
async function tokenOf(deps: BearerDeps, authorization: string | undefined): Promise<Resolution> {
  const principal = await resolveBearer(deps.db, authorization);
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
async function authorize(
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

async function cacheRequest(c: Context<PublicEnv>, deps: ServerDeps, remove: boolean) {
  let body: unknown;
  try {
    body = await c.req.json();
  } catch {
    return c.json({ ok: false, error: 'the body must be JSON: {"url": "..."}', urls: [] }, 400);
  }
  const parsed = PublicCacheRequest.safeParse(body);
  if (!parsed.success)
    return c.json({ ok: false, error: 'url is required (at most 4096 characters)', urls: [] }, 400);
  const { url } = parsed.data;
  const originId = await originOfUrl(deps.db, c.get('principal').organizationId, url);
  if (originId === undefined) {
    return c.json(
      { ok: false, error: 'url must be an absolute image URL of one of your origins', urls: [] },
      404,
    );
  }
  if (!deps.cacheControl)
    return c.json({ ok: false, error: 'the image cache cannot be reached', urls: [] }, 503);
  let urls: string[];
  try {
    urls = remove
      ? await deps.cacheControl.purge(originId, url)
      : await deps.cacheControl.lookup(originId, url);
  } catch (error) {
    // Redis or an edge away (fleet): the caller retries; nothing was half done on our side.
    deps.log.warn({ err: error, reqId: c.get('requestId') }, 'cache call failed');
    return c.json({ ok: false, error: 'the image cache cannot be reached', urls: [] }, 503);
  }
  return c.json(PublicCacheResponse.parse({ ok: true, urls }));
}

/** The OpenAPI document of the public API, generated from the contract's schemas. */
export function openApiDocument() {
  const schema = (value: z.ZodType) => z.toJSONSchema(value, { io: 'input' });
  const bearer = [{ bearer: [] }];
  const failures = {
    '401': {
      description: 'No valid API token',
      content: { 'application/json': { schema: schema(PublicErrorResponse) } },
    },
    '403': {
      description: 'The token lacks the permission',
      content: { 'application/json': { schema: schema(PublicErrorResponse) } },
    },
    '429': {
      description:
        'Too many calls with this token, or too many bad tokens from this address (see Retry-After)',
      content: { 'application/json': { schema: schema(PublicErrorResponse) } },
    },
  };
  const cacheOperation = (summary: string) => ({
    summary,
    security: bearer,
    requestBody: { required: true, content: { 'application/json': { schema: schema(PublicCacheRequest) } } },
    responses: {
      '200': {
        description: 'Done',
        content: { 'application/json': { schema: schema(PublicCacheResponse) } },
      },
      '400': {
        description: 'No usable url',
        content: { 'application/json': { schema: schema(PublicCacheResponse) } },
      },
      '404': {
        description: 'The url is not one of the organization’s origins',
        content: { 'application/json': { schema: schema(PublicCacheResponse) } },
      },
      ...failures,
    },
  });
  return {
    openapi: '3.1.0',
    info: {
      title: 'Ukiyo public API',
      version: '1',
      description:
        'Token-authenticated calls: `Authorization: Bearer {encoded API token}` (issue tokens on the console’s /token/ screen). The cache calls need the cache permission.',
    },
    servers: [{ url: '/api' }],
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
    paths: {
      '/cache.lookup': { post: cacheOperation('List the cached variants of an image URL') },
      '/cache.delete': { post: cacheOperation('Delete every cached variant of an image URL') },
      '/token.info': {
        post: {
          summary: 'The organization and permissions of the calling token',
          security: bearer,
          responses: {
            '200': {
              description: 'The token',
              content: { 'application/json': { schema: schema(TokenInfoResponse) } },
            },
            ...failures,
          },
        },
      },
    },
  };
}

/** The public API under /api: cache lookup and delete, token info, and its OpenAPI document. */
export function mountPublicApi(app: Hono, deps: ServerDeps): void {
  const api = app.basePath('/api') as unknown as Hono<PublicEnv>;
  const document = openApiDocument();
  api.get('/openapi.json', (c) => c.json(document));
  api.post('/cache.lookup', bearerAuth(deps, Permission.cache, 'public'), (c) =>
    cacheRequest(c, deps, false),
  );
  api.post('/cache.delete', bearerAuth(deps, Permission.cache, 'public'), (c) => cacheRequest(c, deps, true));
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
