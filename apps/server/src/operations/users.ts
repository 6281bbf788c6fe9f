import { hasPermission, isAdministrator, PASSWORD_MAX, Permission } from '@ukiyo/contract';
import { sql } from 'kysely';
import { hashPassword, verifyPassword } from '../auth/passwords.ts';
import type { AuthContext } from '../auth/session-store.ts';
import type { RateRule } from '../auth/rate-limits.ts';
import type { Db } from '../db/database.ts';
import { findReachableOrganization } from '../db/repositories/organizations.ts';
import {
  accountOf,
  createUser,
  findAccountUserByEmail,
  findUserByEmail,
  findUserById,
  restrictionsOf,
  setUserRestrictions,
  userRestrictions,
  usersReaching,
} from '../db/repositories/users.ts';
import type { UserRow } from '../db/tables.ts';
import { randomToken, tokenDigest } from '../crypto/tokens.ts';
import { AppError, invalid, uniqueOr } from '../http/app-error.ts';
import { catalogueMail } from '../mail/mailer.ts';
import {
  assertFullPermissionUserRemains,
  assertGrantable,
  assertUserLimit,
  publicUrl,
  RESET_MINUTES,
  prepareActivation,
} from '../services/accounts.ts';
import { listAuditEntries } from '../services/audit-trail.ts';
import { authOf, organizationOf, type Handlers, type OperationContext } from './context.ts';
import { presentUser } from './presenters.ts';

/**
 * Reset mails per e-mail address and client address: enough for a person who lost a mail,
 * while a stranger elsewhere cannot use up the owner's own requests. A flood of one inbox is
 * bounded per sending address; spraying many inboxes from one address by RESET_PER_ADDRESS.
 */
export const RESET_PER_EMAIL_AND_ADDRESS: RateRule = { points: 3, seconds: 3600 };
export const RESET_PER_ADDRESS: RateRule = { points: 20, seconds: 3600 };

async function present(db: Db, user: UserRow) {
  return presentUser(user, await accountOf(db, user), await userRestrictions(db, user.id));
}

/** The account whose members the caller manages: the current organization's. */
function managedAccount(context: OperationContext): number {
  const auth = authOf(context);
  if (!hasPermission(auth.user.permission, Permission.member)) throw new AppError('not enough permission');
  return organizationOf(context).sakura_account_id;
}

/** A member of the caller's managed account, or 'not found' (never someone else's user). */
async function managedUser(
  context: OperationContext,
  find: (accountId: number) => Promise<UserRow | undefined>,
) {
  const user = await find(managedAccount(context));
  if (!user) throw new AppError('not found');
  return user;
}

async function checkRestriction(
  db: Db,
  auth: AuthContext,
  accountId: number,
  organizationIds: readonly number[],
  field = 'restriction.organizationIDs',
) {
  for (const id of organizationIds) {
    const organization = await findReachableOrganization(db, auth.scope, id);
    if (!organization || organization.sakura_account_id !== accountId)
      throw invalid(field, 'validation.invalid');
  }
}

export const userHandlers: Handlers = {
  'user.info': async ({ userID }, context) => {
    const auth = authOf(context);
    if (userID === auth.user.id) return { user: await present(context.deps.db, auth.user) };
    const user = await managedUser(context, async (accountId) => {
      const found = await findUserById(context.deps.db, userID);
      return found && (found.sakura_account_id === accountId || isAdministrator(auth.user.permission))
        ? found
        : undefined;
    });
    return { user: await present(context.deps.db, user) };
  },

  'user.list': async ({ organization_id }, context) => {
    const auth = authOf(context);
    const { db } = context.deps;
    const organization =
      organization_id === undefined
        ? organizationOf(context)
        : await findReachableOrganization(db, auth.scope, organization_id);
    if (!organization) throw new AppError('not found');
    const users = await usersReaching(db, organization.sakura_account_id, organization.id)
      .orderBy('users.id')
      .execute();
    const restrictions = await restrictionsOf(
      db,
      users.map((user) => user.id),
    );
    const account = await db
      .selectFrom('sakura_accounts')
      .selectAll()
      .where('id', '=', organization.sakura_account_id)
      .executeTakeFirstOrThrow();
    return { users: users.map((user) => presentUser(user, account, restrictions.get(user.id) ?? [])) };
  },

  'user.add': async ({ user, password }, context) => {
    const auth = authOf(context);
    const organization = organizationOf(context);
    const accountId = managedAccount(context);
    assertGrantable(auth, user.permission, undefined, 'user.permission');
    const restriction = user.restriction?.organizationIDs ?? [organization.id];
    const { db } = context.deps;
    await checkRestriction(db, auth, accountId, restriction, 'user.restriction.organizationIDs');
    await assertUserLimit(db, organization);
    if (await findUserByEmail(db, user.emailAddress))
      throw invalid('user.emailAddress', 'validation.duplicate');
    const passwordHash = await hashPassword(password);
    const { created, mail } = await uniqueOr(invalid('user.emailAddress', 'validation.duplicate'), () =>
      db.transaction().execute(async (trx) => {
        const id = await createUser(trx, {
          email: user.emailAddress,
          full_name: user.fullName,
          password_hash: passwordHash,
          permission: user.permission,
          sakura_account_id: accountId,
        });
        await setUserRestrictions(trx, id, restriction);
        const mail = await prepareActivation(context.deps, trx, { id, email: user.emailAddress });
        return { created: (await findUserById(trx, id))!, mail };
      }),
    );
    await context.deps.mailer.send(mail);
    return { user: await present(db, created) };
  },

  'user.update': async (input, context) => {
    const auth = authOf(context);
    const { db, sessions } = context.deps;
    const self = input.oldEmailAddress.toLowerCase() === auth.user.email.toLowerCase();
    const target = self
      ? auth.user
      : await managedUser(context, (accountId) =>
          findAccountUserByEmail(db, accountId, input.oldEmailAddress),
        );
    assertGrantable(auth, input.permission, self ? auth.user.permission : undefined);
    const emailChanges = input.emailAddress.toLowerCase() !== target.email.toLowerCase();
    if (self && emailChanges && !(await verifyPassword(target.password_hash, input.password ?? ''))) {
      throw new AppError('password is incorrect');
    }
    if (emailChanges && (await findUserByEmail(db, input.emailAddress))) {
      throw invalid('emailAddress', 'validation.duplicate');
    }
    const restriction = input.restriction?.organizationIDs;
    // Restrictions are set by those who manage members, never widened by the user on themself.
    if (restriction && self && !isAdministrator(auth.user.permission))
      throw invalid('restriction', 'validation.invalid');
    if (restriction && target.sakura_account_id !== null) {
      await checkRestriction(db, auth, target.sakura_account_id, restriction);
    }
    const updated = await db.transaction().execute(async (trx) => {
      await trx
        .updateTable('users')
        .set({
          email: input.emailAddress,
          full_name: input.fullName,
          permission: input.permission,
          updated_at: new Date(),
        })
        .where('id', '=', target.id)
        .execute();
      if (restriction) await setUserRestrictions(trx, target.id, restriction);
      // Only a change that takes something away can leave an organization without a keeper.
      const shrinks = (target.permission & ~input.permission) !== 0 || restriction !== undefined;
      if (shrinks && target.sakura_account_id !== null) {
        await assertFullPermissionUserRemains(trx, target.sakura_account_id);
      }
      return (await findUserById(trx, target.id))!;
    });
    await sessions.invalidate({ userId: target.id });
    return { user: await present(db, updated) };
  },

  'user.set_enabled': async ({ emailAddress, enabled }, context) => {
    const { db, sessions } = context.deps;
    const target = await managedUser(context, (accountId) =>
      findAccountUserByEmail(db, accountId, emailAddress),
    );
    const updated = await db.transaction().execute(async (trx) => {
      await trx
        .updateTable('users')
        .set({ enabled, updated_at: new Date() })
        .where('id', '=', target.id)
        .execute();
      await assertFullPermissionUserRemains(trx, target.sakura_account_id!);
      return (await findUserById(trx, target.id))!;
    });
    if (!enabled) await sessions.destroyUserSessions(target.id);
    return { user: await present(db, updated) };
  },

  'user.delete': async ({ userID }, context) => {
    const auth = authOf(context);
    const { db, sessions } = context.deps;
    if (userID === auth.user.id) throw new AppError('not valid user');
    const target = await managedUser(context, async (accountId) => {
      const found = await findUserById(db, userID);
      return found?.sakura_account_id === accountId ? found : undefined;
    });
    await db.transaction().execute(async (trx) => {
      await trx.deleteFrom('users').where('id', '=', target.id).execute();
      await assertFullPermissionUserRemains(trx, target.sakura_account_id!);
    });
    await sessions.invalidate({ userId: target.id });
    return {};
  },

  'user.update_password': async ({ userId, oldPassword, newPassword }, context) => {
    const auth = authOf(context);
    const { db, sessions } = context.deps;
    const actorIsActiveAdmin = isAdministrator(auth.user.permission) && auth.user.activated_at !== null;
    if (userId !== auth.user.id && !actorIsActiveAdmin) throw new AppError('not found');
    const target = userId === auth.user.id ? auth.user : await findUserById(db, userId);
    if (!target) throw new AppError('not found');
    if (userId === auth.user.id) {
      if (oldPassword.length > PASSWORD_MAX) throw new AppError('password too long');
      if (!(await verifyPassword(target.password_hash, oldPassword)))
        throw new AppError('wrong old password');
    }
    await db
      .updateTable('users')
      .set({
        password_hash: await hashPassword(newPassword),
        activated_at: target.activated_at ?? new Date(),
        activation_token_hash: null,
        activation_expires_at: null,
        updated_at: new Date(),
      })
      .where('id', '=', target.id)
      .execute();
    // Every other session of that user ends: whoever knew the old password is out.
    await sessions.destroyUserSessions(target.id, userId === auth.user.id ? auth.sessionHash : undefined);
    return { user: await present(db, (await findUserById(db, target.id))!) };
  },

  'user.activate': async ({ token }, context) => {
    const { db, sessions } = context.deps;
    const user = await db
      .selectFrom('users')
      .selectAll()
      .where('activation_token_hash', '=', tokenDigest(token))
      .executeTakeFirst();
    if (!user) throw new AppError('sql: no rows in result set');
    if (user.activated_at !== null) throw new AppError('already activated');
    if (!user.activation_expires_at || user.activation_expires_at.getTime() < Date.now()) {
      throw new AppError('token is expired');
    }
    await db.updateTable('users').set({ activated_at: new Date() }).where('id', '=', user.id).execute();
    await sessions.invalidate({ userId: user.id });
    return { emailAddress: user.email };
  },

  'user.request_password_reset': async ({ emailAddress }, context) => {
    const { db, limits, mailer, log } = context.deps;
    const { ip } = context.request;
    await limits.spend('reset:address', RESET_PER_ADDRESS, ip);
    await limits.spend(
      'reset:email-address',
      RESET_PER_EMAIL_AND_ADDRESS,
      `${emailAddress.toLowerCase()} ${ip}`,
    );
    const user = await findUserByEmail(db, emailAddress);
    if (!user || !user.enabled) return {};
    const token = randomToken();
    await db
      .insertInto('password_resets')
      .values({
        token_hash: tokenDigest(token),
        user_id: user.id,
        expires_at: new Date(Date.now() + RESET_MINUTES * 60_000),
      })
      .execute();
    // Not awaited: the answer must take as long for a known address as for an unknown one.
    mailer
      .send({
        ...catalogueMail(user.email, 'mail.reset.subject', 'mail.reset.body', {
          minutes: RESET_MINUTES,
          url: publicUrl(context.deps, `forget/?token=${token}`),
        }),
        secret: token,
      })
      .catch((error: unknown) => log.warn({ err: error }, 'password reset mail failed'));
    return {};
  },

  'user.reset_password': async ({ token, emailAddress, newPassword }, context) => {
    const { db, sessions } = context.deps;
    const reset = await db
      .selectFrom('password_resets')
      .innerJoin('users', 'users.id', 'password_resets.user_id')
      .select([
        'password_resets.token_hash',
        'password_resets.expires_at',
        'password_resets.used_at',
        'users.id',
        'users.email',
        'users.enabled',
      ])
      .where('password_resets.token_hash', '=', tokenDigest(token))
      .executeTakeFirst();
    if (!reset || reset.used_at !== null || reset.expires_at.getTime() < Date.now() || !reset.enabled) {
      throw new AppError('not valid user');
    }
    if (reset.email.toLowerCase() !== emailAddress.toLowerCase())
      throw new AppError('emailAddress not match');
    const passwordHash = await hashPassword(newPassword);
    await db.transaction().execute(async (trx) => {
      const claimed = await trx
        .updateTable('password_resets')
        .set({ used_at: new Date() })
        .where('token_hash', '=', reset.token_hash)
        .where('used_at', 'is', null)
        .executeTakeFirst();
      if (Number(claimed.numUpdatedRows) !== 1) throw new AppError('not valid user');
      // The link reached the mailbox, which is what activation proves too.
      await trx
        .updateTable('users')
        .set({
          password_hash: passwordHash,
          activated_at: sql`coalesce(activated_at, now())`,
          activation_token_hash: null,
          updated_at: new Date(),
        })
        .where('id', '=', reset.id)
        .execute();
    });
    await sessions.destroyUserSessions(reset.id);
    return {};
  },

  'audit.list': (query, context) => listAuditEntries(context, { userId: authOf(context).user.id }, query),

  'audit.organization_list': (query, context) =>
    listAuditEntries(context, { organizationId: organizationOf(context).id }, query),
};
