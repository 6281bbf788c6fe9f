import { normalisePlan, OriginKind, Plan, planFeatures } from '@ukiyo/contract';
import { sql } from 'kysely';
import { hashPassword } from '../auth/passwords.ts';
import type { Db } from '../db/database.ts';
import {
  createOrganization,
  createSakuraAccount,
  findReachableOrganization,
  listReachableOrganizations,
  type OrganizationRecord,
} from '../db/repositories/organizations.ts';
import { createUser, findUserByEmail, findUserById, usersReaching } from '../db/repositories/users.ts';
import { AppError, invalid, uniqueOr } from '../http/app-error.ts';
import { prepareActivation } from '../services/accounts.ts';
import { applyDuePlanChange, startOfNextMonthUtc } from '../services/plans.ts';
import { authOf, organizationOf, type Handlers } from './context.ts';
import { presentOrganization, presentUser } from './presenters.ts';

async function reload(
  db: Db,
  context: Parameters<typeof authOf>[0],
  id: number,
): Promise<OrganizationRecord> {
  const organization = await findReachableOrganization(db, authOf(context).scope, id);
  if (!organization) throw new AppError('not found');
  return organization;
}

/** Why the organization cannot move to a smaller plan, if it cannot. */
async function downgradeRefusal(
  db: Db,
  organization: OrganizationRecord,
  newPlan: number,
): Promise<AppError | undefined> {
  const features = planFeatures(newPlan);
  if (features.userLimit !== null) {
    const users = await usersReaching(db, organization.sakura_account_id, organization.id)
      .clearSelect()
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .executeTakeFirstOrThrow();
    if (Number(users.count) > features.userLimit) return new AppError('plan user count over limit');
  }
  const origins = await db
    .selectFrom('origins')
    .select([
      (eb) => eb.fn.countAll<number>().as('count'),
      sql<number>`count(*) filter (where lower(origin_name) <> lower(name))`.as('customDomains'),
      sql<number>`count(*) filter (where kind <> ${OriginKind.http})`.as('nonHttp'),
    ])
    .where('organization_id', '=', organization.id)
    .executeTakeFirstOrThrow();
  if (!features.customDomain && Number(origins.customDomains) > 0)
    return new AppError('plan custom domain in use');
  if (Number(origins.count) > features.originLimit) return new AppError('plan origin count over limit');
  if (!features.s3Origins && Number(origins.nonHttp) > 0) return new AppError('plan non-http origin in use');
  return undefined;
}

export const organizationHandlers: Handlers = {
  'admin.list_organizations': async (_input, context) => {
    const organizations = await listReachableOrganizations(context.deps.db, authOf(context).scope);
    return { organizations: organizations.map(presentOrganization) };
  },

  'admin.register': async ({ user, organization, sakuraAccount, password }, context) => {
    const { db } = context.deps;
    if (await findUserByEmail(db, user.emailAddress))
      throw invalid('user.emailAddress', 'validation.duplicate');
    const passwordHash = await hashPassword(password);
    const created = await uniqueOr(invalid('organization.serviceCode', 'validation.duplicate'), () =>
      db.transaction().execute(async (trx) => {
        let accountId = sakuraAccount.sakuraAccountID;
        if (accountId === 0) {
          const taken = await trx
            .selectFrom('sakura_accounts')
            .select('id')
            .where('member_code', '=', sakuraAccount.sakuraMemberCode)
            .executeTakeFirst();
          if (taken) throw invalid('sakuraAccount.sakuraMemberCode', 'validation.duplicate');
          accountId = await createSakuraAccount(trx, {
            memberCode: sakuraAccount.sakuraMemberCode,
            name: sakuraAccount.name,
          });
        } else if (
          !(await trx
            .selectFrom('sakura_accounts')
            .select('id')
            .where('id', '=', accountId)
            .executeTakeFirst())
        ) {
          throw invalid('sakuraAccount.sakuraAccountID', 'validation.invalid');
        }
        const taken = await trx
          .selectFrom('organizations')
          .select('id')
          .where('service_code', '=', organization.serviceCode)
          .executeTakeFirst();
        if (taken) throw invalid('organization.serviceCode', 'validation.duplicate');
        const organizationId = await createOrganization(trx, { ...organization, accountId });
        const userId = await createUser(trx, {
          email: user.emailAddress,
          full_name: user.fullName,
          password_hash: passwordHash,
          permission: user.permission,
          sakura_account_id: accountId,
        });
        const mail = await prepareActivation(context.deps, trx, { id: userId, email: user.emailAddress });
        return { organizationId, userId, mail };
      }),
    );
    await context.deps.mailer.send(created.mail);
    const record = await reload(db, context, created.organizationId);
    const userRow = (await findUserById(db, created.userId))!;
    const account = await db
      .selectFrom('sakura_accounts')
      .selectAll()
      .where('id', '=', record.sakura_account_id)
      .executeTakeFirstOrThrow();
    return {
      user: presentUser(userRow, account, []),
      organization: presentOrganization(record),
      sakuraAccount: {
        sakuraAccountID: account.id,
        sakuraMemberCode: account.member_code,
        name: account.name,
      },
    };
  },

  'admin.update_organization': async ({ organization }, context) => {
    const { db, sessions } = context.deps;
    await reload(db, context, organization.organizationID);
    await uniqueOr(invalid('organization.serviceCode', 'validation.duplicate'), () =>
      db
        .updateTable('organizations')
        .set({
          name: organization.name,
          service_code: organization.serviceCode,
          service_domain: organization.serviceDomain,
          plan: organization.plan,
          is_live: organization.isLive,
          enable_text_overlay: organization.enableTextOverlay,
          description: organization.description,
          updated_at: new Date(),
        })
        .where('id', '=', organization.organizationID)
        .execute(),
    );
    await sessions.invalidate({ organizationId: organization.organizationID });
    return { organization: presentOrganization(await reload(db, context, organization.organizationID)) };
  },

  'organization.update': async (input, context) => {
    const { db, sessions } = context.deps;
    const organization = organizationOf(context);
    await db
      .updateTable('organizations')
      .set({
        name: input.name,
        service_domain: input.serviceDomain,
        description: input.description,
        updated_at: new Date(),
      })
      .where('id', '=', organization.id)
      .execute();
    await sessions.invalidate({ organizationId: organization.id });
    return { organization: presentOrganization(await reload(db, context, organization.id)) };
  },

  'organization.plan_features': async (_input, context) => {
    const { db } = context.deps;
    const organization = await applyDuePlanChange(db, organizationOf(context), context.deps.sessions);
    return {
      plan: normalisePlan(organization.plan),
      features: planFeatures(organization.plan),
      pendingPlan: organization.pending_plan,
      pendingPlanAt: organization.pending_plan_at?.toISOString() ?? null,
    };
  },

  'organization.change_plan': async ({ newPlan }, context) => {
    const { db, sessions } = context.deps;
    const organization = await applyDuePlanChange(db, organizationOf(context), sessions);
    const current = normalisePlan(organization.plan);
    if (newPlan === current && organization.pending_plan === null) throw new AppError('plan change invalid');
    if (newPlan === Plan.enterprise || current === Plan.enterprise)
      throw new AppError('plan change needs sales');
    if (newPlan >= current) {
      // Upgrades apply at once (and cancel a downgrade that was waiting).
      await db
        .updateTable('organizations')
        .set({ plan: newPlan, pending_plan: null, pending_plan_at: null, updated_at: new Date() })
        .where('id', '=', organization.id)
        .execute();
      await sessions.invalidate({ organizationId: organization.id });
      return { plan: newPlan, pendingPlan: null, effectiveAt: new Date().toISOString() };
    }
    const refusal = await downgradeRefusal(db, organization, newPlan);
    if (refusal) throw refusal;
    const effectiveAt = startOfNextMonthUtc(new Date());
    await db
      .updateTable('organizations')
      .set({ pending_plan: newPlan, pending_plan_at: effectiveAt, updated_at: new Date() })
      .where('id', '=', organization.id)
      .execute();
    await sessions.invalidate({ organizationId: organization.id });
    return { plan: current, pendingPlan: newPlan, effectiveAt: effectiveAt.toISOString() };
  },
};
