import {
  isOperationName,
  type AuditKind,
  type OperationName,
  type OperationOutput,
  type OperationParsedInput,
  type Operations,
} from '@ukiyo/contract';
import { sql } from 'kysely';
import { findReachableOrganization } from '../db/repositories/organizations.ts';
import { findAccountUserByEmail, findUserById, userRestrictions } from '../db/repositories/users.ts';
import type { UserRow } from '../db/tables.ts';
import {
  authOf,
  organizationOf,
  type Handler,
  type Handlers,
  type OperationContext,
} from '../operations/context.ts';
import { presentOrganization } from '../operations/presenters.ts';

/**
 * The configuration audit trail (issue 18). Every operation that changes an organization's
 * configuration has a describer below: what kind of thing it changes, how to read that thing's
 * state (one bounded, indexed read, scoped to the caller's organization) before and after the
 * handler, or what to say when there is nothing to read (a purge, a rotated secret). The
 * handlers map is wrapped once (withAuditTrail), so every dispatch path that calls the handlers
 * (the console's ui-api, the token API) records the same entries, and no handler knows of it.
 */

type State = Record<string, unknown>;
/** A changed thing: its display name and the fields an entry compares. */
interface Subject {
  name: string;
  state: State;
}
type ChangeKind = Exclude<AuditKind, 'login' | 'logout' | 'login_failed'>;

interface Describer<N extends OperationName> {
  kind: ChangeKind;
  /** The subject before the handler runs; absent for creations. */
  before?: (
    input: OperationParsedInput<Operations[N]>,
    context: OperationContext,
  ) => Promise<Subject | undefined>;
  /** The subject after a successful handler; undefined when it no longer exists. */
  after: (
    input: OperationParsedInput<Operations[N]>,
    output: OperationOutput<Operations[N]>,
    context: OperationContext,
  ) => Promise<Subject | undefined> | Subject | undefined;
  /** The organization the change belongs to, when it is not the caller's current one. */
  organizationOf?: (output: OperationOutput<Operations[N]>) => number;
}

/** Field names whose values are secrets: an entry says they changed, never what they hold. */
const SECRET_FIELD =
  /secret|password|privatekey|passphrase|credential|backupcodes|^token$|encodedtoken|streamkey/i;
export const MASK = '********';

/** `value` with every secret field replaced by the mask (empty secrets stay empty: "none set"). */
export function maskSecrets(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(maskSecrets);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, field]) => [
      key,
      SECRET_FIELD.test(key) && field !== '' && field !== null ? MASK : maskSecrets(field),
    ]),
  );
}

/**
 * The fields that differ between two states, each side holding only those (compared before
 * masking, so a changed secret shows up as a changed field whose values are both masked).
 */
export function changedFields(
  before: State | undefined,
  after: State | undefined,
): { before: State | null; after: State | null } {
  if (!before || !after) {
    return {
      before: before ? (maskSecrets(before) as State) : null,
      after: after ? (maskSecrets(after) as State) : null,
    };
  }
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].filter(
    (key) => JSON.stringify(before[key]) !== JSON.stringify(after[key]),
  );
  const pick = (state: State) =>
    maskSecrets(Object.fromEntries(keys.map((key) => [key, state[key] ?? null]))) as State;
  return { before: pick(before), after: pick(after) };
}

/** Readers of the things a change may touch: one indexed read each, in the caller's organization. */
async function readOrigin(context: OperationContext, originID: number): Promise<Subject | undefined> {
  const { db, secrets } = context.deps;
  const row = await db
    .selectFrom('origins')
    .selectAll()
    .where('id', '=', originID)
    .where('organization_id', '=', organizationOf(context).id)
    .executeTakeFirst();
  if (!row) return undefined;
  const rules = await db
    .selectFrom('conversion_parameters')
    .select(['pattern', 'path', 'parameter', 'disallow_override'])
    .where('origin_id', '=', row.id)
    .orderBy('position')
    .execute();
  const { secretAccessKeyEnc, ...config } = row.config;
  const open = (sealed: unknown) => (typeof sealed === 'string' && sealed !== '' ? secrets.open(sealed) : '');
  return {
    name: row.name,
    state: {
      originName: row.origin_name,
      kind: row.kind,
      enableSignedUrl: row.enable_signed_url,
      // Opened only to compare: maskSecrets replaces it before anything is stored.
      signingSecret: open(row.signing_secret_enc),
      defaultCache: row.default_cache,
      enableClientHints: row.enable_client_hints,
      allowSvg: row.allow_svg,
      description: row.description,
      config:
        secretAccessKeyEnc === undefined ? config : { ...config, secretAccessKey: open(secretAccessKeyEnc) },
      acl: row.acl,
      overridableParameters: row.overridable_parameters,
      conversionParameters: rules.map((rule) => ({
        pattern: rule.pattern,
        path: rule.path,
        parameter: rule.parameter,
        disallowOverride: rule.disallow_override,
      })),
    },
  };
}

async function readCertificate(context: OperationContext, originID: number): Promise<Subject | undefined> {
  const origin = await context.deps.db
    .selectFrom('origins')
    .leftJoin('tls_certificates', 'tls_certificates.origin_id', 'origins.id')
    .select(['origins.name', 'tls_certificates.fingerprint', 'tls_certificates.expires_at'])
    .where('origins.id', '=', originID)
    .where('origins.organization_id', '=', organizationOf(context).id)
    .executeTakeFirst();
  if (!origin) return undefined;
  return {
    name: origin.name,
    state: { fingerprint: origin.fingerprint, expiresAt: origin.expires_at?.toISOString() ?? null },
  };
}

async function presentMember(
  context: OperationContext,
  user: UserRow | undefined,
): Promise<Subject | undefined> {
  if (!user) return undefined;
  return {
    name: user.email,
    state: {
      emailAddress: user.email,
      fullName: user.full_name,
      permission: user.permission,
      enabled: user.enabled,
      restriction: await userRestrictions(context.deps.db, user.id),
    },
  };
}

/** The caller, or a member of the caller's organization's account, by e-mail address or id. */
async function readMember(context: OperationContext, key: string | number): Promise<Subject | undefined> {
  const { db } = context.deps;
  const auth = authOf(context);
  const self =
    typeof key === 'number' ? key === auth.user.id : key.toLowerCase() === auth.user.email.toLowerCase();
  const accountId = auth.organization?.sakura_account_id;
  if (self) return presentMember(context, await findUserById(db, auth.user.id));
  if (accountId === undefined) return undefined;
  const user =
    typeof key === 'number' ? await findUserById(db, key) : await findAccountUserByEmail(db, accountId, key);
  return presentMember(context, user?.sakura_account_id === accountId ? user : undefined);
}

async function readToken(context: OperationContext, tokenId: number): Promise<Subject | undefined> {
  const row = await context.deps.db
    .selectFrom('auth_tokens')
    .select(['description', 'permission', 'enabled', 'deleted_at', 'token_last4'])
    .where('id', '=', tokenId)
    .where('organization_id', '=', organizationOf(context).id)
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    name: row.description || `…${row.token_last4}`,
    state: {
      description: row.description,
      permission: row.permission,
      enabled: row.enabled,
      deleted: row.deleted_at !== null,
    },
  };
}

async function readOrganization(
  context: OperationContext,
  organizationId: number,
): Promise<Subject | undefined> {
  const row = await findReachableOrganization(context.deps.db, authOf(context).scope, organizationId);
  if (!row) return undefined;
  const { sakuraAccount: _account, features: _features, ...organization } = presentOrganization(row);
  return {
    name: row.name,
    state: {
      ...organization,
      pendingPlan: row.pending_plan,
      pendingPlanAt: row.pending_plan_at?.toISOString() ?? null,
    },
  };
}

async function readPlan(context: OperationContext): Promise<Subject | undefined> {
  const organization = await readOrganization(context, organizationOf(context).id);
  if (!organization) return undefined;
  const { plan, pendingPlan, pendingPlanAt } = organization.state;
  return { name: organization.name, state: { plan, pendingPlan, pendingPlanAt } };
}

/** What a cache purge changed, whichever API it came through. */
export function purgeSubject(originID: number, url: string, urls: readonly string[]): Subject {
  return { name: url, state: { originID, url, purged: urls.length } };
}

/** What a purge by path prefix changed, whichever API it came through. */
export function prefixPurgeSubject(originID: number, pathPrefix: string, images: number): Subject {
  return { name: pathPrefix, state: { originID, pathPrefix, images } };
}

/** The caller's own account, for changes to it that have no state to compare. */
function ownAccount(context: OperationContext, state: State): Subject {
  return { name: authOf(context).user.email, state };
}

function describers<T extends { [N in OperationName]?: Describer<N> }>(table: T): T {
  return table;
}

/** Every audited operation. An operation missing here changes no configuration. */
const AUDITED = describers({
  'origin.add': {
    kind: 'origin',
    after: (_input, { origin }, context) => readOrigin(context, origin.originID),
  },
  'origin.update': {
    kind: 'origin',
    before: ({ origin }, context) => readOrigin(context, origin.originID),
    after: ({ origin }, _output, context) => readOrigin(context, origin.originID),
  },
  'origin.delete': {
    kind: 'origin',
    before: ({ originID }, context) => readOrigin(context, originID),
    after: () => undefined,
  },
  'origin.copy': {
    kind: 'origin',
    after: (_input, { origin }, context) => readOrigin(context, origin.originID),
  },
  'origin.rotate_signing_secret': {
    kind: 'origin',
    before: ({ originID }, context) => readOrigin(context, originID),
    after: ({ originID }, _output, context) => readOrigin(context, originID),
  },
  'origin.upload_tls_certificate': {
    kind: 'certificate',
    before: ({ originID }, context) => readCertificate(context, originID),
    after: ({ originID }, _output, context) => readCertificate(context, originID),
  },
  'user.add': {
    kind: 'member',
    after: (_input, { user }, context) => readMember(context, user.userID),
  },
  'user.update': {
    kind: 'member',
    before: ({ oldEmailAddress }, context) => readMember(context, oldEmailAddress),
    after: (_input, { user }, context) => readMember(context, user.userID),
  },
  'user.set_enabled': {
    kind: 'member',
    before: ({ emailAddress }, context) => readMember(context, emailAddress),
    after: (_input, { user }, context) => readMember(context, user.userID),
  },
  'user.delete': {
    kind: 'member',
    before: ({ userID }, context) => readMember(context, userID),
    after: () => undefined,
  },
  'user.update_password': {
    kind: 'password',
    after: (_input, _output, context) => ownAccount(context, { password: MASK }),
  },
  'user.totp_enable': {
    kind: 'two_step',
    after: (_input, _output, context) => ownAccount(context, { twoStep: true, backupCodes: MASK }),
  },
  'user.totp_disable': {
    kind: 'two_step',
    after: (_input, _output, context) => ownAccount(context, { twoStep: false }),
  },
  'user.regenerate_backup_codes': {
    kind: 'two_step',
    after: (_input, _output, context) => ownAccount(context, { backupCodes: MASK }),
  },
  'auth_token.add': {
    kind: 'token',
    after: (_input, { authToken }, context) => readToken(context, authToken.authTokenID),
  },
  'auth_token.disable': {
    kind: 'token',
    before: ({ authTokenID }, context) => readToken(context, authTokenID),
    after: ({ authTokenID }, _output, context) => readToken(context, authTokenID),
  },
  'auth_token.delete': {
    kind: 'token',
    before: ({ authTokenID }, context) => readToken(context, authTokenID),
    after: ({ authTokenID }, _output, context) => readToken(context, authTokenID),
  },
  'organization.change_plan': {
    kind: 'plan',
    before: (_input, context) => readPlan(context),
    after: (_input, _output, context) => readPlan(context),
  },
  'organization.update': {
    kind: 'organization',
    before: (_input, context) => readOrganization(context, organizationOf(context).id),
    after: (_input, _output, context) => readOrganization(context, organizationOf(context).id),
  },
  'admin.register': {
    kind: 'organization',
    after: (_input, { organization }, context) => readOrganization(context, organization.organizationID),
    organizationOf: ({ organization }) => organization.organizationID,
  },
  'admin.update_organization': {
    kind: 'organization',
    before: ({ organization }, context) => readOrganization(context, organization.organizationID),
    after: ({ organization }, _output, context) => readOrganization(context, organization.organizationID),
    organizationOf: ({ organization }) => organization.organizationID,
  },
  'organization.rotate_webhook_secret': {
    kind: 'webhook_secret',
    after: (_input, { createdAt }, context) => ({
      name: organizationOf(context).name,
      state: { secret: MASK, createdAt },
    }),
  },
  'channel.add': {
    kind: 'channel',
    after: (input, { channel }) => ({ name: channel.id, state: input }),
  },
  'channel.delete': {
    kind: 'channel',
    after: ({ id }) => ({ name: id, state: { status: 'deleting' } }),
  },
  'cache.delete': {
    kind: 'cache',
    after: ({ originID, url }, { urls }) => purgeSubject(originID, url, urls),
  },
  'cache.purge_prefix': {
    kind: 'cache',
    after: ({ originID, pathPrefix }, { images }) => prefixPurgeSubject(originID, pathPrefix, images),
  },
});

/** Who made a change, from where: the person, and the API token when one was used. */
export interface AuditActor {
  userId: number | null;
  email: string;
  ip: string;
  token?: { id: number; name: string };
}

function actorOf(context: OperationContext): AuditActor {
  const { user } = authOf(context);
  return { userId: user.id, email: user.email, ip: context.request.ip, token: context.apiToken };
}

/** Stores one change; `before`/`after` are the subject's states (undefined: absent). */
export async function recordConfigurationChange(
  context: Pick<OperationContext, 'deps'>,
  change: {
    actor: AuditActor;
    organizationId: number | null;
    operation: string;
    kind: ChangeKind;
    subject: string;
    before: State | undefined;
    after: State | undefined;
  },
): Promise<void> {
  const { before, after } = changedFields(change.before, change.after);
  await context.deps.db
    .insertInto('audit_events')
    .values({
      kind: change.kind,
      operation: change.operation,
      subject: change.subject,
      email: change.actor.email,
      ip: change.actor.ip,
      user_id: change.actor.userId,
      token_id: change.actor.token?.id ?? null,
      token_name: change.actor.token?.name ?? null,
      organization_id: change.organizationId,
      before: before && JSON.stringify(before),
      after: after && JSON.stringify(after),
    })
    .execute();
}

function audited<N extends OperationName>(name: N, handler: Handler<N>, describer: Describer<N>): Handler<N> {
  return async (input, context) => {
    const before = await describer.before?.(input, context);
    const output = await handler(input, context);
    try {
      const after = await describer.after(input, output, context);
      await recordConfigurationChange(context, {
        actor: actorOf(context),
        organizationId: describer.organizationOf?.(output) ?? context.auth?.organization?.id ?? null,
        operation: name,
        kind: describer.kind,
        subject: (after ?? before)?.name ?? '',
        before: before?.state,
        after: after?.state,
      });
    } catch (error) {
      // The change is made and answered; a lost entry is logged loudly rather than reported
      // to the caller as a failure of the change itself.
      context.deps.log.error({ err: error, operation: name }, 'audit entry not recorded');
    }
    return output;
  };
}

/** `handlers` with every audited operation recording its change after it succeeds. */
export function withAuditTrail(handlers: Handlers): Handlers {
  const wrapped: Handlers = { ...handlers };
  for (const [name, describer] of Object.entries(AUDITED)) {
    const handler = handlers[name as OperationName];
    if (handler && isOperationName(name))
      (wrapped as Record<string, unknown>)[name] = audited(name, handler as never, describer as never);
  }
  return wrapped;
}

/** Filters and a page of the trail; the caller's scope is fixed by the operation, not the input. */
export async function listAuditEntries(
  context: OperationContext,
  scope: { userId: number } | { organizationId: number },
  query: { kind?: AuditKind; actor: string; from?: string; to?: string; cursor?: number; limit: number },
) {
  let select = context.deps.db.selectFrom('audit_events').selectAll();
  select =
    'userId' in scope
      ? select.where('user_id', '=', scope.userId)
      : select.where('organization_id', '=', scope.organizationId);
  if (query.kind) select = select.where('kind', '=', query.kind);
  if (query.actor !== '') {
    const pattern = `%${query.actor.toLowerCase().replace(/[\\%_]/g, (char) => `\\${char}`)}%`;
    select = select.where((eb) =>
      eb.or([
        eb(sql<string>`lower(email)`, 'like', pattern),
        eb(sql<string>`lower(coalesce(token_name, ''))`, 'like', pattern),
      ]),
    );
  }
  if (query.from) select = select.where('created_at', '>=', new Date(query.from));
  if (query.to) select = select.where('created_at', '<', new Date(query.to));
  if (query.cursor) select = select.where('id', '<', query.cursor);
  // One more than a page says whether another page follows.
  const rows = await select
    .orderBy('id', 'desc')
    .limit(query.limit + 1)
    .execute();
  const page = rows.slice(0, query.limit);
  return {
    entries: page.map((row) => ({
      auditEntryID: Number(row.id),
      time: row.created_at.toISOString(),
      kind: row.kind as AuditKind,
      email: row.email,
      ip: row.ip,
      token: row.token_id === null ? null : { id: Number(row.token_id), name: row.token_name ?? '' },
      operation: row.operation,
      subject: row.subject,
      before: row.before,
      after: row.after,
    })),
    nextCursor: rows.length > query.limit ? Number(page[page.length - 1]!.id) : null,
  };
}
