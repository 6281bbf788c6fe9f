import {
  API_VERSION,
  ERRORS,
  hasPermission,
  invalidsOf,
  isAdministrator,
  isOperationName,
  operations,
  type ErrorBody,
  type Operation,
  type OperationName,
} from '@ukiyo/contract';
import type { HttpBindings } from '@hono/node-server';
import type { Context, Hono } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import type { AuthContext } from '../auth/session-store.ts';
import type { Handler, Handlers, OperationContext, ServerDeps } from '../operations/context.ts';
import { AppError } from './app-error.ts';
import { clientAddress, isSameOrigin, isSecureRequest } from './request.ts';

export const SESSION_COOKIE = 'ukiyo_session';

/** Told of every operation that succeeded, after its answer is built. */
export type AfterOperation = (name: string, context: OperationContext) => void;
const MAX_BODY_BYTES = 1024 * 1024;

function fail(c: Context, body: ErrorBody) {
  return c.json(body, ERRORS[body.error].status);
}

/** The access rules of an operation, in the fixed order: session, activation, organization, permission. */
export function accessRefusal(operation: Operation, auth: AuthContext | null): AppError | undefined {
  if (operation.access === 'public') return undefined;
  if (!auth || auth.secondFactorPending) return new AppError('session is invalid');
  if (operation.access === 'session') return undefined;
  const { user, organization } = auth;
  if (user.activated_at === null) return new AppError('not activated');
  if (operation.adminOnly && !isAdministrator(user.permission)) return new AppError('not enough permission');
  if (operation.access === 'activated') return undefined;
  if (!organization) return new AppError('organization not selected');
  if (!hasPermission(user.permission, operation.permission)) return new AppError('not enough permission');
  if (operation.organizationKind === 'image' && organization.is_live)
    return new AppError('image not available');
  if (operation.organizationKind === 'live' && !organization.is_live) {
    return new AppError('live streaming not available');
  }
  return undefined;
}

/**
 * Reads the body straight from Node's request stream when there is one: building a WHATWG
 * Request around it costs more than the whole of a cached whoami.
 */
function readBody(c: Context): Promise<string> {
  const incoming = (c.env as Partial<HttpBindings> | undefined)?.incoming;
  if (!incoming) return c.req.text();
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    incoming.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        incoming.destroy();
        reject(new AppError('malformed request body'));
      } else chunks.push(chunk);
    });
    incoming.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    incoming.on('error', reject);
  });
}

/** The request's JSON body, at most MAX_BODY_BYTES; an empty body reads as `{}`. */
export async function readJson(c: Context): Promise<unknown> {
  const length = Number(c.req.header('content-length') ?? 0);
  if (length > MAX_BODY_BYTES) throw new AppError('malformed request body');
  const text = await readBody(c);
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text);
  } catch {
    throw new AppError('malformed request body');
  }
}

/**
 * The fields (dot-joined paths, as `invalids` names them) of strings holding a NUL character,
 * which PostgreSQL's text cannot store: refused as invalid rather than failing in the database.
 */
function fieldsWithNul(value: unknown, path: string[] = []): string[] {
  if (typeof value === 'string') return value.includes('\u0000') ? [path.join('.') || 'root'] : [];
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([key, item]) => fieldsWithNul(item, [...path, key]));
}

/** An operation's answer: its output, or the error body with the seconds to wait if any. */
export type Outcome = { output: unknown } | { error: ErrorBody; retryAfterSeconds?: number };

/**
 * One operation after its transport's checks, the same for every transport (ui-api, /api/v1):
 * access rules from the contract, zod validation of `readInput()`'s value (read only once access
 * is granted), the handler, the output schema (which strips anything a handler should not have
 * returned), then `afterOperation`. Failures are error bodies; anything unexpected is logged
 * and answers 'internal error'.
 */
export async function runOperation(
  name: OperationName,
  readInput: () => Promise<unknown>,
  context: OperationContext,
  handlers: Handlers,
  afterOperation: AfterOperation | undefined,
  requestId: string,
): Promise<Outcome> {
  const operation: Operation = operations[name];
  try {
    const refused = accessRefusal(operation, context.auth);
    if (refused) throw refused;
    const input = await readInput();
    const withNul = fieldsWithNul(input);
    if (withNul.length > 0) {
      return {
        error: {
          error: 'validation error',
          invalids: Object.fromEntries(withNul.map((field) => [field, ['validation.invalid']])),
        },
      };
    }
    const parsed = operation.input.safeParse(input);
    if (!parsed.success) return { error: { error: 'validation error', invalids: invalidsOf(parsed.error) } };
    const handler = handlers[name] as Handler<typeof name> | undefined;
    if (!handler) return { error: { error: 'not implemented' } };
    const output: unknown = operation.output.parse(await handler(parsed.data as never, context));
    afterOperation?.(name, context);
    return { output };
  } catch (error) {
    if (error instanceof AppError) {
      return {
        error: { error: error.code, ...error.details },
        retryAfterSeconds: error.headers.retryAfterSeconds,
      };
    }
    context.deps.log.error({ err: error, operation: name, reqId: requestId }, 'operation failed');
    return { error: { error: 'internal error' } };
  }
}

/**
 * `POST /.ui-api/{operation}?api-version=2.29`: transport checks, session, access rules from
 * the contract, zod validation, the handler, and the output schema (which strips anything a
 * handler should not have returned). Every failure is `{error, invalids?, params?}`.
 */
export function mountUiApi(
  app: Hono,
  deps: ServerDeps,
  handlers: Handlers,
  afterOperation?: AfterOperation,
): void {
  // Answers carry personal data, secrets shown once and session state: no browser or proxy
  // cache may keep one, refusals included.
  app.use('/.ui-api/*', async (c, next) => {
    await next();
    c.header('Cache-Control', 'no-store');
  });
  app.all('/.ui-api/:operation', async (c) => {
    if (c.req.method !== 'POST') return fail(c, { error: 'method not allowed' });
    if (c.req.query('api-version') !== API_VERSION) return fail(c, { error: 'unsupported api version' });
    if (c.req.header('x-requested-with') !== 'XMLHttpRequest') {
      return fail(c, { error: 'missing X-Requested-With header' });
    }
    if (!isSameOrigin(c, deps.config)) return fail(c, { error: 'cross-site request refused' });
    const name = c.req.param('operation');
    if (!isOperationName(name)) return fail(c, { error: 'unknown operation' });

    const secure = isSecureRequest(c, deps.config);
    const token = getCookie(c, SESSION_COOKIE);
    const context: OperationContext = {
      deps,
      auth: await deps.sessions.resolve(token),
      request: { ip: clientAddress(c, deps.config), userAgent: c.req.header('user-agent') ?? '' },
      startSession: async (values) => {
        const session = await deps.sessions.create({ ...values, ...context.request });
        setCookie(c, SESSION_COOKIE, session.token, {
          httpOnly: true,
          sameSite: 'Lax',
          secure,
          path: '/',
          expires: session.expiresAt,
        });
        context.auth = await deps.sessions.resolve(session.token);
      },
      endSession: async () => {
        await deps.sessions.destroy(token);
        deleteCookie(c, SESSION_COOKIE, { path: '/', secure });
        context.auth = null;
      },
    };
    if (token && !context.auth) deleteCookie(c, SESSION_COOKIE, { path: '/', secure });

    const outcome = await runOperation(
      name,
      () => readJson(c),
      context,
      handlers,
      afterOperation,
      c.get('requestId'),
    );
    if ('output' in outcome) return c.json(outcome.output);
    if (outcome.retryAfterSeconds !== undefined) c.header('Retry-After', String(outcome.retryAfterSeconds));
    return fail(c, outcome.error);
  });
}
