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
import type { RateRule, Verdict } from '../auth/rate-limits.ts';
import type { ServerDeps } from '../operations/context.ts';
import { originOfUrl } from '../services/cache.ts';
import { clientAddress } from './request.ts';

type PublicEnv = { Variables: { principal: TokenPrincipal } };

/** Guessing tokens: wrong or missing bearer tokens per client address. */
export const BAD_TOKENS_PER_ADDRESS: RateRule = { points: 20, seconds: 15 * 60 };

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

/** The encoded API token of the Authorization header, one indexed read. */
async function tokenOf(deps: BearerDeps, c: Context): Promise<Resolution> {
  const principal = await resolveBearer(deps.db, c.req.header('authorization'));
  return principal ? { principal } : { refused: 401, error: 'invalid or missing API token' };
}

/**
 * The bearer check around `resolve`. A valid principal is never refused for what others sent
 * from its address: bad or missing bearers (401) count only against their address
 * (BAD_TOKENS_PER_ADDRESS, then 429 for further bad ones), and a valid principal only against
 * its own budget for this API, per minute, in memory or Redis (see RateLimits), never the
 * database. Failures answer `{ok: false, error}`.
 */
function guarded(
  deps: BearerDeps,
  permission: number,
  budget: TokenBudget,
  resolve: (c: Context) => Promise<Resolution>,
): MiddlewareHandler<PublicEnv> {
  const perToken: RateRule = { points: deps.config[CALLS_PER_MINUTE[budget]], seconds: 60 };
  const tooMany = (c: Context, verdict: Verdict) => {
    rateLimitHeaders(c, verdict);
    return c.json({ ok: false, error: 'too many requests' }, 429);
  };
  return async (c, next) => {
    const resolved = await resolve(c);
    if (!resolved.principal) {
      const { refused, error } = resolved;
      if (refused === 401) {
        const address = clientAddress(c, deps.config);
        const verdict = await deps.limits.take('api-bad-token', BAD_TOKENS_PER_ADDRESS, address);
        if (!verdict.allowed) return tooMany(c, verdict);
        c.header('WWW-Authenticate', 'Bearer');
      }
      return c.json({ ok: false, error }, refused);
    }
    const { principal } = resolved;
    const verdict = await deps.limits.take(`api-token:${budget}`, perToken, principal.limitKey);
    if (!verdict.allowed) return tooMany(c, verdict);
    rateLimitHeaders(c, verdict);
    if (!principalHolds(principal, permission)) {
      return c.json({ ok: false, error: 'the API token lacks the permission for this call' }, 403);
    }
    c.set('principal', principal);
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
  return guarded(deps, permission, budget, (c) => tokenOf(deps, c));
}

/** What WHIP's check needs: the bearer check's deps and the key publish credentials are signed under. */
export type PublishAuthDeps = BearerDeps & Pick<ServerDeps, 'secrets'>;

/**
 * WHIP's check on `/whip/{channel}…`: an API token holding the live permission, as bearerAuth
 * takes it, or a publish credential the console issued for that channel (publish-credentials.ts),
 * which has a WHIP budget of its own as a token has.
 */
export function publishAuth(deps: PublishAuthDeps): MiddlewareHandler<PublicEnv> {
  return guarded(deps, Permission.channel, 'whip', async (c) => {
    const bearer = /^Bearer\s+(\S+)$/i.exec(c.req.header('authorization') ?? '')?.[1];
    if (!bearer || !isPublishCredential(bearer)) return tokenOf(deps, c);
    const check = await checkPublishCredential(deps.db, deps.secrets, bearer, c.req.param('channel') ?? '');
    if (check.principal) return check;
    return check.refused === 'another channel'
      ? { refused: 403, error: 'the publish credential is for another channel' }
      : { refused: 401, error: 'invalid or expired publish credential' };
  });
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
