import { ALL_MEMBER_PERMISSIONS, hasPermission, isAdministrator, Permission } from '@ukiyo/contract';
import { encodeToken, maskToken } from '../auth/api-tokens.ts';
import { randomToken, tokenDigest } from '../crypto/tokens.ts';
import type { Db } from '../db/database.ts';
import type { Selectable } from 'kysely';
import type { AuthTokenTable } from '../db/tables.ts';
import { AppError } from '../http/app-error.ts';
import type { AuthContext } from '../auth/session-store.ts';
import { authOf, organizationOf, type Handlers } from './context.ts';

function presentToken(row: Selectable<AuthTokenTable>, token = maskToken(row.token_last4)) {
  return {
    authTokenID: row.id,
    organizationID: row.organization_id,
    token,
    enabled: row.enabled,
    deleted: row.deleted_at !== null,
    description: row.description,
    createdAt: row.created_at.toISOString(),
    permission: row.permission,
  };
}

/**
 * The organization's tokens this user manages: every one with the member-management bit (or as
 * an administrator), else only the tokens they created themselves.
 */
function manageableTokens(db: Db, auth: AuthContext, organizationId: number) {
  const query = db.selectFrom('auth_tokens').selectAll().where('organization_id', '=', organizationId);
  return hasPermission(auth.user.permission, Permission.member)
    ? query
    : query.where('created_by', '=', auth.user.id);
}

/** Another member's token reads as missing, as it is missing from that user's list. */
async function manageableToken(db: Db, auth: AuthContext, organizationId: number, id: number) {
  const row = await manageableTokens(db, auth, organizationId)
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  if (!row) throw new AppError('not found');
  return row;
}

export const tokenHandlers: Handlers = {
  'auth_token.list': async ({ showDeleted }, context) => {
    let query = manageableTokens(context.deps.db, authOf(context), organizationOf(context).id);
    if (!showDeleted) query = query.where('deleted_at', 'is', null);
    const rows = await query.orderBy('id', 'desc').execute();
    return { authTokens: rows.map((row) => presentToken(row)) };
  },

  'auth_token.add': async ({ authToken }, context) => {
    const auth = authOf(context);
    const held = auth.user.permission;
    // A token never carries more than its creator holds: an unset mask (every flag) is for
    // members holding every permission, the administrator flag for administrators.
    const permission =
      authToken.permission ?? ((held & ALL_MEMBER_PERMISSIONS) === ALL_MEMBER_PERMISSIONS ? null : held);
    if (permission !== null && !isAdministrator(held) && (permission & ~held) !== 0) {
      throw new AppError('validation error', {
        invalids: { 'authToken.permission': ['validation.permissionNotHeld'] },
      });
    }
    if (permission !== null && permission & Permission.admin && !isAdministrator(held)) {
      throw new AppError('validation error', {
        invalids: { 'authToken.permission': ['validation.permissionNotHeld'] },
      });
    }
    const secret = randomToken();
    const row = await context.deps.db
      .insertInto('auth_tokens')
      .values({
        organization_id: organizationOf(context).id,
        token_hash: tokenDigest(secret),
        token_last4: secret.slice(-4),
        description: authToken.description,
        permission,
        enabled: authToken.enabled,
        created_by: auth.user.id,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return { authToken: presentToken(row, secret), encodedToken: encodeToken(secret) };
  },

  'auth_token.disable': async ({ authTokenID }, context) => {
    const { db } = context.deps;
    const row = await manageableToken(db, authOf(context), organizationOf(context).id, authTokenID);
    const updated = await db
      .updateTable('auth_tokens')
      .set({ enabled: false })
      .where('id', '=', row.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    // Every console process stops taking it before this call returns.
    await context.deps.sessions.invalidate({ tokenId: row.id });
    return { authToken: presentToken(updated) };
  },

  'auth_token.delete': async ({ authTokenID }, context) => {
    const { db } = context.deps;
    const row = await manageableToken(db, authOf(context), organizationOf(context).id, authTokenID);
    await db
      .updateTable('auth_tokens')
      .set({ enabled: false, deleted_at: new Date() })
      .where('id', '=', row.id)
      .execute();
    await context.deps.sessions.invalidate({ tokenId: row.id });
    return {};
  },
};
