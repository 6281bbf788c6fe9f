import { randomToken, tokenDigest } from '../crypto/tokens.ts';
import { ALL_MEMBER_PERMISSIONS, isAdministrator, Permission, planFeatures } from '@ukiyo/contract';
import { sql } from 'kysely';
import type { AuthContext } from '../auth/session-store.ts';
import type { Db } from '../db/database.ts';
import { usersReaching } from '../db/repositories/users.ts';
import { AppError, invalid } from '../http/app-error.ts';
import { catalogueMail, type Mail } from '../mail/mailer.ts';
import type { ServerDeps } from '../operations/context.ts';

export const ACTIVATION_DAYS = 7;
export const RESET_MINUTES = 60;

/** Links in mails use PUBLIC_URL, never the request's Host header (which a caller controls). */
export function publicUrl(deps: ServerDeps, path: string): string {
  const base = deps.config.PUBLIC_URL ?? `http://localhost:${deps.config.PORT}`;
  return new URL(path, base.endsWith('/') ? base : `${base}/`).toString();
}

/**
 * Who may set which bits: only bits the actor holds (administrators hold all); the
 * administrator bit only by administrators; on oneself, bits may be dropped but never regained.
 */
export function assertGrantable(
  actor: AuthContext,
  permission: number,
  ownCurrent?: number,
  field = 'permission',
): void {
  const held = isAdministrator(actor.user.permission) ? 0x7f : actor.user.permission;
  const limit = ownCurrent === undefined ? held : held & ownCurrent;
  if (
    (permission & ~limit) !== 0 ||
    (permission & Permission.admin && !isAdministrator(actor.user.permission))
  ) {
    throw invalid(field, 'validation.permissionNotHeld');
  }
}

/** Refuses a change that would leave an organization of the account without a full-permission member. */
export async function assertFullPermissionUserRemains(db: Db, accountId: number): Promise<void> {
  const organizations = await db
    .selectFrom('organizations')
    .select('id')
    .where('sakura_account_id', '=', accountId)
    .execute();
  for (const { id } of organizations) {
    const keeper = await usersReaching(db, accountId, id)
      .where('enabled', '=', true)
      .where(sql<number>`permission & ${ALL_MEMBER_PERMISSIONS}`, '=', ALL_MEMBER_PERMISSIONS)
      .select('users.id as keeper')
      .executeTakeFirst();
    if (!keeper) throw new AppError('at least one user must have all permissions');
  }
}

export async function assertUserLimit(
  db: Db,
  organization: { id: number; sakura_account_id: number; plan: number },
) {
  const limit = planFeatures(organization.plan).userLimit;
  if (limit === null) return;
  const row = await usersReaching(db, organization.sakura_account_id, organization.id)
    .clearSelect()
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .executeTakeFirstOrThrow();
  if (Number(row.count) >= limit) throw new AppError('too many users exist in organization');
}

/**
 * A new activation link for a user who is not activated yet: stores it with `db` (the caller's
 * transaction) and returns the mail, to be sent once that transaction has committed.
 */
export async function prepareActivation(
  deps: ServerDeps,
  db: Db,
  user: { id: number; email: string },
): Promise<Mail> {
  const token = randomToken();
  await db
    .updateTable('users')
    .set({
      activation_token_hash: tokenDigest(token),
      activation_expires_at: new Date(Date.now() + ACTIVATION_DAYS * 86_400_000),
    })
    .where('id', '=', user.id)
    .execute();
  return {
    ...catalogueMail(user.email, 'mail.activation.subject', 'mail.activation.body', {
      email: user.email,
      days: ACTIVATION_DAYS,
      url: publicUrl(deps, `activate/${token}`),
    }),
    secret: token,
  };
}
