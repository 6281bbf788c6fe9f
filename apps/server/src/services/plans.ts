import type { SessionStore } from '../auth/session-store.ts';
import type { Db } from '../db/database.ts';
import type { OrganizationRecord } from '../db/repositories/organizations.ts';

/** Downgrades take effect with the next billing period: a calendar month in UTC. */
export function startOfNextMonthUtc(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
}

/** Applies a postponed plan change whose time has come, when the organization is next read. */
export async function applyDuePlanChange(
  db: Db,
  organization: OrganizationRecord,
  sessions: SessionStore,
  now = new Date(),
): Promise<OrganizationRecord> {
  if (
    organization.pending_plan === null ||
    !organization.pending_plan_at ||
    organization.pending_plan_at > now
  ) {
    return organization;
  }
  await db
    .updateTable('organizations')
    .set({ plan: organization.pending_plan, pending_plan: null, pending_plan_at: null, updated_at: now })
    .where('id', '=', organization.id)
    .execute();
  await sessions.invalidate({ organizationId: organization.id });
  return { ...organization, plan: organization.pending_plan, pending_plan: null, pending_plan_at: null };
}
