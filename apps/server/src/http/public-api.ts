import type { Context, Hono, MiddlewareHandler } from 'hono';
import { principalHolds, resolveBearer, type TokenPrincipal } from '../auth/api-tokens.ts';
import type { ServerDeps } from '../operations/context.ts';

type PublicEnv = { Variables: { principal: TokenPrincipal } };

/**
 * Bearer-token authentication for the public APIs (cache, live): an encoded API token of the
 * organization, holding `permission`. Failures answer `{ok: false, error}` with 401 or 403.
 */
export function bearerAuth(deps: ServerDeps, permission: number): MiddlewareHandler<PublicEnv> {
  return async (c, next) => {
    const principal = await resolveBearer(deps.db, c.req.header('authorization'));
    if (!principal) {
      c.header('WWW-Authenticate', 'Bearer');
      return c.json({ ok: false, error: 'invalid or missing API token' }, 401);
    }
    if (!principalHolds(principal, permission)) {
      return c.json({ ok: false, error: 'the API token lacks the permission for this call' }, 403);
    }
    c.set('principal', principal);
    await next();
  };
}

export function principalOf(c: Context<PublicEnv>): TokenPrincipal {
  return c.get('principal');
}

/** `POST /api/token.info`: lets a customer check which organization and permissions a token has. */
export function mountPublicApi(app: Hono, deps: ServerDeps): void {
  const api = app.basePath('/api') as unknown as Hono<PublicEnv>;
  api.post('/token.info', bearerAuth(deps, 0), (c) => {
    const principal = principalOf(c);
    return c.json({ ok: true, organizationID: principal.organizationId, permission: principal.permission });
  });
}
