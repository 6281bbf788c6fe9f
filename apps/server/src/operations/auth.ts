import { PASSWORD_MAX } from '@ukiyo/contract';
import type { GuessRule } from '../auth/rate-limits.ts';
import { spendVerificationTime, verifyPassword } from '../auth/passwords.ts';
import type { AuthContext } from '../auth/session-store.ts';
import { recordAudit } from '../db/repositories/audit.ts';
import type { Db } from '../db/database.ts';
import { findReachableOrganization, listReachableOrganizations } from '../db/repositories/organizations.ts';
import {
  findUserByEmail,
  rememberOrganization,
  scopeOf,
  userRestrictions,
} from '../db/repositories/users.ts';
import type { UserRow } from '../db/tables.ts';
import { AppError } from '../http/app-error.ts';
import { authOf, type Handlers } from './context.ts';
import { presentOrganization, presentUser } from './presenters.ts';

export function presentSession(auth: AuthContext | null) {
  if (!auth || auth.secondFactorPending) return { user: null, organization: null };
  return {
    user: presentUser(auth.user, auth.account, auth.restrictedTo),
    organization: auth.organization ? presentOrganization(auth.organization) : null,
  };
}

/**
 * The organization a login starts in: the one used last if still reachable, else the only
 * reachable one; with several and no history a member chooses, while an administrator (who
 * reaches them all and lands on the origin list) starts in the first.
 */
async function startingOrganization(db: Db, user: UserRow): Promise<number | null> {
  const scope = scopeOf(user, await userRestrictions(db, user.id));
  if (user.last_organization_id !== null) {
    const last = await findReachableOrganization(db, scope, user.last_organization_id);
    if (last) return last.id;
  }
  const reachable = await listReachableOrganizations(db, scope, 2);
  return reachable.length === 1 || (scope.isAdmin && reachable.length > 0) ? reachable[0]!.id : null;
}

/**
 * Wrong passwords for one account from one address: 5, then that pair is locked for 1 min,
 * doubling at each further lock within a day up to 1 h. Keyed by the address too, so nobody
 * can lock an owner out by failing from elsewhere; the owner's success clears the pair.
 */
export const LOGIN_PER_ACCOUNT_AND_ADDRESS: GuessRule = {
  points: 5,
  seconds: 24 * 3600,
  firstLockSeconds: 60,
  maxLockSeconds: 3600,
  clearOnSuccess: true,
};

/**
 * Failed logins from one address over any accounts (a spray, or many people behind one NAT):
 * 50 in 15 min lock the address for 15 min, doubling within a day up to 1 h. Successes from it
 * give their attempt back without clearing the others' failures.
 */
export const LOGIN_PER_ADDRESS: GuessRule = {
  points: 50,
  seconds: 15 * 60,
  firstLockSeconds: 15 * 60,
  maxLockSeconds: 3600,
  clearOnSuccess: false,
};

export const authHandlers: Handlers = {
  'user.whoami': async (_input, context) => presentSession(context.auth),

  'auth.login': async ({ emailAddress, password }, context) => {
    const { db, limits } = context.deps;
    // Refused before any guess is counted: it costs no verification.
    if (password.length > PASSWORD_MAX) throw new AppError('password too long');
    const { ip } = context.request;
    // Keyed by the e-mail as typed, known or not: a lock must not tell which addresses exist.
    const guesses = [
      await limits.guesses('login:address', LOGIN_PER_ADDRESS).begin(ip),
      await limits
        .guesses('login:account-address', LOGIN_PER_ACCOUNT_AND_ADDRESS)
        .begin(`${emailAddress.toLowerCase()} ${ip}`),
    ];

    const user = await findUserByEmail(db, emailAddress);
    const valid = user
      ? await verifyPassword(user.password_hash, password)
      : await spendVerificationTime(password);
    if (!user || !valid || !user.enabled) {
      await Promise.all(guesses.map((guess) => guess.failed()));
      await recordAudit(db, {
        kind: 'login_failed',
        email: emailAddress,
        ip: context.request.ip,
        userId: user?.id ?? null,
        organizationId: null,
      });
      throw new AppError('wrong email or password');
    }
    await Promise.all(guesses.map((guess) => guess.succeeded()));

    const organizationId = await startingOrganization(db, user);
    const totpRequired = user.totp_enabled_at !== null;
    await context.endSession();
    await context.startSession({ userId: user.id, organizationId, secondFactorPending: totpRequired });
    await recordAudit(db, {
      kind: 'login',
      email: user.email,
      ip: context.request.ip,
      userId: user.id,
      organizationId,
    });
    return { ...presentSession(context.auth), totpRequired };
  },

  'auth.logout': async (_input, context) => {
    const auth = context.auth;
    if (auth) {
      await recordAudit(context.deps.db, {
        kind: 'logout',
        email: auth.user.email,
        ip: context.request.ip,
        userId: auth.user.id,
        organizationId: auth.organization?.id ?? null,
      });
    }
    await context.endSession();
    return {};
  },

  'auth.change_organization': async ({ organizationID }, context) => {
    const auth = authOf(context);
    const { db, sessions } = context.deps;
    const organization = await findReachableOrganization(db, auth.scope, organizationID);
    if (!organization) throw new AppError('not found');
    await sessions.setOrganization(auth, organization.id);
    await rememberOrganization(db, auth.user.id, organization.id);
    return presentSession({ ...auth, organization });
  },

  'organization.list': async (_input, context) => {
    const auth = authOf(context);
    const organizations = await listReachableOrganizations(context.deps.db, auth.scope);
    return { organizations: organizations.map(presentOrganization) };
  },
};
