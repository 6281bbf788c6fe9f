import { createHash } from 'node:crypto';
import {
  ALL_PERMISSIONS,
  ERRORS,
  integer,
  invalidsOf,
  isAdministrator,
  operations,
  type ErrorBody,
  type OperationName,
} from '@ukiyo/contract';
import type { Context, Hono } from 'hono';
import type { ExpressionBuilder } from 'kysely';
import { z } from 'zod';
import { bearerSecret, findToken, type TokenPrincipal } from '../auth/api-tokens.ts';
import { authContextOf, type AuthContext, type TokenCaller } from '../auth/session-store.ts';
import { tokenDigest } from '../crypto/tokens.ts';
import type { Database } from '../db/tables.ts';
import { findUserById } from '../db/repositories/users.ts';
import type { Handlers, OperationContext, ServerDeps } from '../operations/context.ts';
import { AppError } from './app-error.ts';
import { authorize, rateLimitHeaders, resolutionOf } from './public-api.ts';
import { clientAddress } from './request.ts';
import { readJson, runOperation, type AfterOperation, type Outcome } from './ui-api.ts';

/** What a route builds its operation's input from. */
export interface RouteRequest {
  params: Record<string, string | number>;
  query: Record<string, string>;
  body: Record<string, unknown>;
}

/**
 * One REST call: which console operation it runs and how its input is made (then validated by
 * that operation's zod schema, the only validation there is). `body`, `query` and the path's
 * parameters are also what the OpenAPI document says of the call.
 */
export interface ApiRoute {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Under /api/v1, with `{name}` parameters (OpenAPI's form). */
  path: string;
  operation: OperationName;
  summary: string;
  /** The operation's input; by default the query's `query` parameters, the body and the path's parameters. */
  input?: (request: RouteRequest) => unknown;
  /** The JSON body's schema, a part of the operation's input schema (or that of `bodyAt`). */
  body?: z.ZodType;
  /**
   * The input field the body (with the path's parameters) goes in: the body is that object, and
   * `invalids` name its fields from the body's root.
   */
  bodyAt?: string;
  /** Query parameters taken into the input, typed by the operation's input schema. */
  query?: readonly string[];
  /** The output's field answered alone: a single resource, which has an ETag. */
  resource?: string;
  /** The output's array this call pages through (`cursor`, `limit`, `nextCursor`). */
  list?: string;
  /** A creating call: 201, and an Idempotency-Key makes it safe to retry. */
  creates?: boolean;
}

/** Path parameters that are numbers in the operations' inputs. */
export const INTEGER_PARAMS = new Set(['originID', 'authTokenID']);

const inputOf = (name: OperationName) => operations[name].input as unknown as z.ZodObject;
const inputField = (name: OperationName, field: string) => inputOf(name).shape[field] as z.ZodType;

/** A query value as the operation's schema expects it: booleans and integers are JSON there. */
function queryValue(value: string): unknown {
  if (value === 'true' || value === 'false') return value === 'true';
  return /^-?\d{1,15}$/.test(value) ? Number(value) : value;
}

function picked(query: Record<string, string>, names: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(
    names.filter((name) => query[name] !== undefined).map((name) => [name, queryValue(query[name]!)]),
  );
}

const STATISTICS_QUERY = ['from', 'to'] as const;
const AUDIT_QUERY = ['kind', 'actor', 'from', 'to', 'cursor', 'limit'] as const;

/**
 * Every /api/v1 call. Session-only operations (login, passwords, two-step, organization switch)
 * and the administrators' own are not here: a token acts in its organization only. Organization
 * ids are never taken from the caller.
 */
export const API_ROUTES: readonly ApiRoute[] = [
  {
    method: 'GET',
    path: '/organization',
    operation: 'user.whoami',
    summary: 'The organization of the token',
    resource: 'organization',
  },
  {
    method: 'PUT',
    path: '/organization',
    operation: 'organization.update',
    summary: 'Update the organization’s name, service domain and description',
    body: inputOf('organization.update'),
    resource: 'organization',
  },
  {
    method: 'GET',
    path: '/organization/plan',
    operation: 'organization.plan_features',
    summary: 'The plan and its features',
  },
  {
    method: 'GET',
    path: '/origins',
    operation: 'origin.list',
    summary: 'List origins, with this month’s usage',
    list: 'origins',
  },
  {
    method: 'POST',
    path: '/origins',
    operation: 'origin.add',
    summary: 'Create an origin (its rules and ACL included)',
    bodyAt: 'origin',
    resource: 'origin',
    creates: true,
  },
  {
    method: 'GET',
    path: '/origins/{originID}',
    operation: 'origin.get',
    summary: 'One origin',
    resource: 'origin',
  },
  {
    method: 'PUT',
    path: '/origins/{originID}',
    operation: 'origin.update',
    summary: 'Replace an origin’s settings, rules and ACL (If-Match: its ETag)',
    bodyAt: 'origin',
    resource: 'origin',
  },
  {
    method: 'DELETE',
    path: '/origins/{originID}',
    operation: 'origin.delete',
    summary: 'Delete an origin (If-Match: its ETag)',
  },
  {
    method: 'POST',
    path: '/origins/{originID}/copy',
    operation: 'origin.copy',
    summary: 'Create an origin with this one’s settings, rules, ACL and secrets, under a new name',
    body: inputOf('origin.copy').omit({ originID: true }),
    resource: 'origin',
    creates: true,
  },
  {
    method: 'POST',
    path: '/origins/{originID}/signing-secret',
    operation: 'origin.rotate_signing_secret',
    summary: 'Replace the origin’s signing secret with a new random one, answered once here',
    resource: 'origin',
  },
  {
    method: 'POST',
    path: '/origins/{originID}/check',
    operation: 'origin.check',
    summary: 'Fetch a path of the origin as the edge would, and say what happened',
    body: inputOf('origin.check').omit({ originID: true }),
    resource: 'result',
  },
  {
    method: 'PUT',
    path: '/origins/{originID}/certificate',
    operation: 'origin.upload_tls_certificate',
    summary: 'Upload the TLS certificate of the origin’s custom domain',
    body: inputOf('origin.upload_tls_certificate').omit({ originID: true }),
    resource: 'tlsCertificate',
  },
  {
    method: 'GET',
    path: '/cache',
    operation: 'cache.lookup',
    summary: 'The cached variants of an image URL of an origin',
    query: ['originID', 'url'],
  },
  {
    method: 'POST',
    path: '/cache/purge',
    operation: 'cache.delete',
    summary: 'Purge every cached variant of an image URL of an origin',
    body: inputOf('cache.delete'),
  },
  {
    method: 'POST',
    path: '/cache/purge-prefix',
    operation: 'cache.purge_prefix',
    summary: 'Purge every cached image of an origin under a path prefix (`/`: the whole origin)',
    body: inputOf('cache.purge_prefix'),
  },
  {
    method: 'GET',
    path: '/statistics/origins',
    operation: 'statistics.origins',
    summary: 'Image delivery per origin and day over a period',
    query: STATISTICS_QUERY,
  },
  {
    method: 'GET',
    path: '/statistics/channels',
    operation: 'channel.statistics',
    summary: 'Live ingest and delivery per channel and day over a period',
    query: STATISTICS_QUERY,
  },
  {
    method: 'GET',
    path: '/usage',
    operation: 'statistics.dashboard',
    summary: 'This month’s usage against the plan',
  },
  {
    method: 'GET',
    path: '/members',
    operation: 'user.list',
    summary: 'List the organization’s members',
    list: 'users',
  },
  {
    method: 'POST',
    path: '/members',
    operation: 'user.add',
    summary: 'Invite a member (they get an activation mail)',
    body: inputOf('user.add'),
    resource: 'user',
    creates: true,
  },
  {
    method: 'PUT',
    path: '/members/{emailAddress}',
    operation: 'user.update',
    summary: 'Change a member’s name, e-mail address, permissions or restriction',
    input: ({ params, body }) => ({ ...body, oldEmailAddress: params.emailAddress }),
    body: inputOf('user.update').omit({ oldEmailAddress: true }),
    resource: 'user',
  },
  {
    method: 'PUT',
    path: '/members/{emailAddress}/enabled',
    operation: 'user.set_enabled',
    summary: 'Enable or disable a member',
    body: inputOf('user.set_enabled').omit({ emailAddress: true }),
    resource: 'user',
  },
  {
    method: 'GET',
    path: '/tokens',
    operation: 'auth_token.list',
    summary: 'List your API tokens (every token of the organization with the member permission)',
    query: ['showDeleted'],
    list: 'authTokens',
  },
  {
    method: 'POST',
    path: '/tokens',
    operation: 'auth_token.add',
    summary: 'Create an API token holding at most the calling token’s permissions',
    bodyAt: 'authToken',
    creates: true,
  },
  {
    method: 'POST',
    path: '/tokens/{authTokenID}/disable',
    operation: 'auth_token.disable',
    summary: 'Disable an API token',
    resource: 'authToken',
  },
  {
    method: 'DELETE',
    path: '/tokens/{authTokenID}',
    operation: 'auth_token.delete',
    summary: 'Revoke an API token',
  },
  {
    method: 'GET',
    path: '/audit',
    operation: 'audit.organization_list',
    summary: 'Changes to the organization and sign-ins to it, newest first (the operation’s own cursor)',
    query: AUDIT_QUERY,
  },
  {
    method: 'GET',
    path: '/audit/mine',
    operation: 'audit.list',
    summary: 'What the token’s creator did, newest first (the operation’s own cursor)',
    query: AUDIT_QUERY,
  },
  {
    method: 'GET',
    path: '/channels',
    operation: 'channel.list',
    summary: 'List live channels',
    list: 'channels',
  },
  {
    method: 'POST',
    path: '/channels',
    operation: 'channel.add',
    summary: 'Create a live channel',
    body: inputOf('channel.add'),
    resource: 'channel',
    creates: true,
  },
  {
    method: 'DELETE',
    path: '/channels/{channelID}',
    operation: 'channel.delete',
    summary: 'Delete a live channel',
    input: ({ params }) => ({ id: params.channelID }),
  },
  {
    method: 'GET',
    path: '/status',
    operation: 'status.list',
    summary: 'Incidents and maintenance of the service',
    list: 'events',
  },
];

/** The schema of a route's JSON body, if it takes one. */
export function bodySchema(route: ApiRoute): z.ZodType | undefined {
  return route.bodyAt ? inputField(route.operation, route.bodyAt) : route.body;
}

function operationInput(route: ApiRoute, request: RouteRequest): unknown {
  if (route.input) return route.input(request);
  const fromQuery = picked(request.query, route.query ?? []);
  const fields = { ...request.body, ...request.params };
  return route.bodyAt ? { ...fromQuery, [route.bodyAt]: fields } : { ...fromQuery, ...fields };
}

/** An error body whose `invalids` name fields from the request body's root (see `bodyAt`). */
function bodyRelative(route: ApiRoute, error: ErrorBody): ErrorBody {
  const { bodyAt } = route;
  if (!bodyAt || !error.invalids) return error;
  const fieldOf = (field: string) =>
    field === bodyAt ? 'root' : field.startsWith(`${bodyAt}.`) ? field.slice(bodyAt.length + 1) : field;
  return {
    ...error,
    invalids: Object.fromEntries(
      Object.entries(error.invalids).map(([field, refs]) => [fieldOf(field), refs]),
    ),
  };
}

/** `cursor` and `limit` of a list call; the cursor is opaque to callers (it is an offset). */
export const PageQuery = z.object({
  cursor: z
    .string()
    .max(64)
    .transform((cursor, ctx) => {
      const offset = /^o(\d{1,9})$/.exec(Buffer.from(cursor, 'base64url').toString('latin1'))?.[1];
      if (offset === undefined) ctx.addIssue({ code: 'custom', message: 'validation.invalid' });
      return Number(offset);
    })
    .optional(),
  limit: z.coerce.number().pipe(integer(1, 200)).default(50),
});

const cursorAt = (offset: number) => Buffer.from(`o${offset}`, 'latin1').toString('base64url');

/** The ETag of a presented resource: a digest of its JSON, so any visible change changes it. */
export function etagOf(resource: unknown): string {
  return `"${createHash('sha256').update(JSON.stringify(resource)).digest('base64url').slice(0, 27)}"`;
}

/** True when an If-Match (or If-None-Match) list names `etag`, or is `*`. */
function listsEtag(header: string, etag: string): boolean {
  return header
    .split(',')
    .map((value) => value.trim().replace(/^W\//, ''))
    .some((value) => value === '*' || value === etag);
}

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;
/** How long an Idempotency-Key is remembered: a retry after that runs the call again. */
const IDEMPOTENCY_MS = 24 * 3600 * 1000;

/** What a call answers; `replayed`: the kept answer of an earlier call with its Idempotency-Key. */
type Answer = { status: number; body?: unknown; etag?: string; replayed?: boolean };

const failure = (body: ErrorBody): Answer => ({ status: ERRORS[body.error].status, body });

/**
 * The caller of a token: its creator acting in the token's organization, with the token's mask
 * AND the creator's own bits (an administrator's count as every bit), so a token never does
 * more than the member who made it can do now. Undefined when the creator is gone, disabled or
 * no longer reaches the organization.
 */
async function creatorCaller(deps: ServerDeps, principal: TokenPrincipal): Promise<AuthContext | undefined> {
  const { token } = principal;
  if (!token || token.createdBy === null) return undefined;
  const user = await findUserById(deps.db, token.createdBy);
  if (!user || !user.enabled) return undefined;
  const held = isAdministrator(user.permission) ? ALL_PERMISSIONS : user.permission;
  const permission = (principal.permission ?? ALL_PERMISSIONS) & held;
  const auth = await authContextOf(deps.db, { ...user, permission }, principal.organizationId, {
    sessionHash: `api-token:${token.id}`,
    secondFactorPending: false,
  });
  return auth.organization ? auth : undefined;
}

/**
 * The token of a call and its caller (creatorCaller), kept with the sessions for their few
 * seconds (resolveToken): a token disabled or revoked, or its creator disabled or changed, is
 * dropped from every console process's memory before that change's call returns. The bearer
 * may be the encoded token (as the other token APIs take it) or the raw secret.
 */
async function tokenCaller(deps: ServerDeps, header: string | undefined): Promise<TokenCaller | undefined> {
  const secret = bearerSecret(header) ?? /^Bearer\s+(\S{1,256})$/i.exec(header ?? '')?.[1];
  if (!secret) return undefined;
  const digest = tokenDigest(secret);
  return deps.sessions.resolveToken(
    digest,
    () => findToken(deps.db, digest),
    (principal) => creatorCaller(deps, principal),
  );
}

function routeParams(c: Context, path: string): Record<string, string | number> {
  const names = [...path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]!);
  return Object.fromEntries(
    names.map((name) => {
      const value = c.req.param(name) ?? '';
      return [name, INTEGER_PARAMS.has(name) && /^\d{1,15}$/.test(value) ? Number(value) : value];
    }),
  );
}

/** The status of a call that succeeded: 201 for a creating one, 204 for a deletion without a body. */
export function successStatus(route: ApiRoute): 200 | 201 | 204 {
  if (route.method === 'DELETE' && !route.resource) return 204;
  return route.creates ? 201 : 200;
}

/** The answer of an outcome on `route`: its resource alone, a page of its list, or the output. */
function present(route: ApiRoute, outcome: Outcome, page: z.output<typeof PageQuery>): Answer {
  if (!('output' in outcome)) return failure(bodyRelative(route, outcome.error));
  const status = successStatus(route);
  const output = outcome.output as Record<string, unknown>;
  if (status === 204) return { status };
  if (route.resource) {
    const resource = output[route.resource];
    return { status, body: resource, etag: etagOf(resource) };
  }
  if (!route.list) return { status, body: output };
  const items = output[route.list] as unknown[];
  const start = page.cursor ?? 0;
  const end = start + page.limit;
  const nextCursor = end < items.length ? cursorAt(end) : null;
  return { status, body: { ...output, [route.list]: items.slice(start, end), nextCursor } };
}

/**
 * `/api/v1`: the console's operations by API token (issue 19). Each call is a row of API_ROUTES
 * run through `runOperation`, as the ui-api runs it (access rules, the contract's zod schemas,
 * the handler, `afterOperation`), for a caller built from the token (tokenCaller). Bad tokens
 * count against their address and each token has a budget of its own per minute
 * (API_V1_RATE_PER_MINUTE), both with RateLimit-* headers, as on the other token APIs.
 */
export function mountApiV1(
  app: Hono,
  deps: ServerDeps,
  handlers: Handlers,
  afterOperation?: AfterOperation,
): void {
  const send = (c: Context, answer: Answer) => {
    if (answer.etag) c.header('ETag', answer.etag);
    if (answer.replayed) c.header('Idempotent-Replayed', 'true');
    return answer.body === undefined
      ? c.body(null, answer.status as 204)
      : c.json(answer.body as object, answer.status as 200);
  };

  const readRoutes = new Map(
    API_ROUTES.filter((route) => route.method === 'GET' && route.resource).map((route) => [
      route.path,
      route,
    ]),
  );

  for (const route of API_ROUTES) {
    const honoPath = `/api/v1${route.path.replace(/\{(\w+)\}/g, ':$1')}`;
    app.on(route.method, honoPath, async (c) => {
      // Answers carry secrets shown once (a new token) and members' personal data.
      c.header('Cache-Control', 'no-store');
      const address = clientAddress(c, deps.config);
      const found = await tokenCaller(deps, c.req.header('authorization'));
      const authorization = await authorize(deps, 0, 'v1', resolutionOf(found?.principal), () => address);
      if (authorization.verdict) rateLimitHeaders(c, authorization.verdict);
      if (!authorization.principal) {
        if (authorization.status === 429) return send(c, failure({ error: 'too many requests' }));
        c.header('WWW-Authenticate', 'Bearer');
        return send(c, failure({ error: 'api token invalid' }));
      }
      const { token } = authorization.principal;
      const caller = found?.caller;
      if (!token || !caller) return send(c, failure({ error: 'api token invalid' }));
      const refuseSessions = () => Promise.reject(new AppError('session is invalid'));
      const context: OperationContext = {
        deps,
        auth: caller,
        request: { ip: address, userAgent: c.req.header('user-agent') ?? '' },
        apiToken: { id: token.id, name: token.name },
        startSession: refuseSessions,
        endSession: refuseSessions,
      };
      const query = c.req.query();
      const page = PageQuery.safeParse(route.list ? query : {});
      if (!page.success)
        return send(c, failure({ error: 'validation error', invalids: invalidsOf(page.error) }));
      const params = routeParams(c, route.path);
      const run = (operation: OperationName, input: () => Promise<unknown>, after?: AfterOperation) =>
        runOperation(operation, input, context, handlers, after, c.get('requestId'));

      const readRoute = readRoutes.get(route.path);
      if (route.method === 'GET' && readRoute === route) {
        const answer = present(
          route,
          await run(route.operation, async () => operationInput(route, { params, query, body: {} })),
          page.data,
        );
        const ifNoneMatch = c.req.header('if-none-match');
        if (answer.etag && ifNoneMatch && listsEtag(ifNoneMatch, answer.etag)) {
          c.header('ETag', answer.etag);
          return c.body(null, 304);
        }
        return send(c, answer);
      }
      const ifMatch = c.req.header('if-match');
      if (ifMatch !== undefined && readRoute && route.method !== 'GET') {
        const current = present(
          readRoute,
          await run(readRoute.operation, async () => operationInput(readRoute, { params, query, body: {} })),
          page.data,
        );
        if (!current.etag) return send(c, current);
        if (!listsEtag(ifMatch, current.etag)) return send(c, failure({ error: 'precondition failed' }));
      }
      const readInput = async () => {
        const body = bodySchema(route) ? await readJson(c) : {};
        if (typeof body !== 'object' || body === null || Array.isArray(body))
          throw new AppError('malformed request body');
        return operationInput(route, { params, query, body: body as Record<string, unknown> });
      };
      const idempotencyKey = route.creates ? c.req.header('idempotency-key') : undefined;
      if (idempotencyKey === undefined) {
        return send(c, present(route, await run(route.operation, readInput, afterOperation), page.data));
      }
      return send(
        c,
        await idempotent(
          deps,
          token.id,
          idempotencyKey,
          `${route.method} ${c.req.path}`,
          readInput,
          async (input) =>
            present(route, await run(route.operation, async () => input, afterOperation), page.data),
        ),
      );
    });
  }
  app.all('/api/v1/*', (c) => send(c, failure({ error: 'not found' })));
}

/**
 * A creating call under an Idempotency-Key: the first runs (its key held meanwhile: a
 * concurrent retry gets 409), and a retry with the same key and request gets the first answer
 * again (Idempotent-Replayed); the key with another request is refused (422). Answers worth
 * repeating are kept (not 429 or 5xx: those may succeed when tried again) for a day.
 */
async function idempotent(
  deps: ServerDeps,
  tokenId: number,
  key: string,
  request: string,
  readInput: () => Promise<unknown>,
  execute: (input: unknown) => Promise<Answer>,
): Promise<Answer> {
  if (!IDEMPOTENCY_KEY.test(key)) {
    return failure({ error: 'validation error', invalids: { 'Idempotency-Key': ['validation.invalid'] } });
  }
  let input: unknown;
  try {
    input = await readInput();
  } catch (error) {
    if (error instanceof AppError) return failure({ error: error.code });
    throw error;
  }
  const digest = createHash('sha256')
    .update(request)
    .update('\n')
    .update(JSON.stringify(input))
    .digest('hex');
  const { db, secrets } = deps;
  const byKey = (eb: ExpressionBuilder<Database, 'api_idempotency'>) =>
    eb.and([eb('token_id', '=', tokenId), eb('idempotency_key', '=', key)]);
  // Every expired key of this token goes, not only this one: keys never sent again would
  // otherwise stay forever (the primary key's token_id prefix bounds the scan to one token).
  await db
    .deleteFrom('api_idempotency')
    .where('token_id', '=', tokenId)
    .where('created_at', '<', new Date(Date.now() - IDEMPOTENCY_MS))
    .execute();
  const claimed = await db
    .insertInto('api_idempotency')
    .values({ token_id: tokenId, idempotency_key: key, request_digest: digest })
    .onConflict((conflict) => conflict.doNothing())
    .returning('token_id')
    .executeTakeFirst();
  if (!claimed) {
    const first = await db
      .selectFrom('api_idempotency')
      .where(byKey)
      .select(['request_digest', 'status', 'body_enc'])
      .executeTakeFirst();
    if (first && first.request_digest !== digest) return failure({ error: 'idempotency key reused' });
    if (!first || first.status === null || first.body_enc === null) {
      return failure({ error: 'idempotency key in use' });
    }
    const kept = JSON.parse(secrets.open(first.body_enc)) as Pick<Answer, 'body' | 'etag'>;
    return { status: first.status, ...kept, replayed: true };
  }
  const answer = await execute(input);
  if (answer.status >= 500 || answer.status === 429) {
    await db.deleteFrom('api_idempotency').where(byKey).execute();
  } else {
    await db
      .updateTable('api_idempotency')
      .where(byKey)
      .set({
        status: answer.status,
        body_enc: secrets.seal(JSON.stringify({ body: answer.body, etag: answer.etag })),
      })
      .execute();
  }
  return answer;
}
