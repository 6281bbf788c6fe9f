import { SAMPLES_SERVICE_CODE } from '@ukiyo/contract';
import { sql } from 'kysely';
import type { Db } from '../database.ts';
import type { Scope } from './scope.ts';

const COLUMNS = [
  'organizations.id',
  'organizations.sakura_account_id',
  'organizations.name',
  'organizations.service_code',
  'organizations.service_domain',
  'organizations.plan',
  'organizations.pending_plan',
  'organizations.pending_plan_at',
  'organizations.is_live',
  'organizations.enable_text_overlay',
  'organizations.description',
  'sakura_accounts.member_code',
  'sakura_accounts.name as account_name',
] as const;

function reachable(db: Db, scope: Scope) {
  let query = db
    .selectFrom('organizations')
    .innerJoin('sakura_accounts', 'sakura_accounts.id', 'organizations.sakura_account_id')
    .select(COLUMNS);
  if (!scope.isAdmin) {
    // A user without an account reaches nothing: -1 matches no row.
    query = query.where('organizations.sakura_account_id', '=', scope.accountId ?? -1);
    if (scope.restrictedTo.length > 0) query = query.where('organizations.id', 'in', scope.restrictedTo);
  }
  return query;
}

export type OrganizationRecord = Awaited<ReturnType<ReturnType<typeof reachable>['executeTakeFirstOrThrow']>>;

export function listReachableOrganizations(
  db: Db,
  scope: Scope,
  limit?: number,
): Promise<OrganizationRecord[]> {
  // The samples organization exists for the guest preview: an administrator starts elsewhere.
  const query = reachable(db, scope)
    .orderBy(sql`organizations.service_code = ${SAMPLES_SERVICE_CODE}`)
    .orderBy('organizations.id');
  return (limit === undefined ? query : query.limit(limit)).execute();
}

export function findReachableOrganization(
  db: Db,
  scope: Scope,
  id: number,
): Promise<OrganizationRecord | undefined> {
  return reachable(db, scope).where('organizations.id', '=', id).executeTakeFirst();
}

export async function createSakuraAccount(
  db: Db,
  values: { memberCode: string; name: string },
): Promise<number> {
  const row = await db
    .insertInto('sakura_accounts')
    .values({ member_code: values.memberCode, name: values.name })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

export async function createOrganization(
  db: Db,
  values: {
    accountId: number;
    name: string;
    serviceCode: string;
    serviceDomain?: string;
    plan?: number;
    isLive?: boolean;
    enableTextOverlay?: boolean;
    description?: string;
  },
): Promise<number> {
  const row = await db
    .insertInto('organizations')
    .values({
      sakura_account_id: values.accountId,
      name: values.name,
      service_code: values.serviceCode,
      service_domain: values.serviceDomain ?? '',
      plan: values.plan ?? 4,
      is_live: values.isLive ?? false,
      enable_text_overlay: values.enableTextOverlay ?? false,
      description: values.description ?? '',
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}
