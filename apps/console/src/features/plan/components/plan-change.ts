import { Plan, type PlanNumber } from '@ukiyo/contract';

/**
 * What choosing `target` means from `current` (apps/server operations/organizations.ts):
 * upgrades apply at once, downgrades with the next billing month (UTC), and anything to or from
 * Enterprise goes through sales.
 */
export type PlanAction = 'current' | 'upgrade' | 'downgrade' | 'sales';

export function planAction(current: PlanNumber, target: PlanNumber): PlanAction {
  if (target === current) return 'current';
  if (target === Plan.enterprise || current === Plan.enterprise) return 'sales';
  return target > current ? 'upgrade' : 'downgrade';
}

/**
 * When a waiting downgrade applies. plan_features does not say, but a waiting change is always
 * for the start of the next UTC month: once that has passed the server has applied it.
 */
export function nextMonthStartUtc(now: Date): string {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString();
}
