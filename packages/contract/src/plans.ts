import type { z } from 'zod';
import type { PlanFeatures as PlanFeaturesSchema } from './entities.ts';

/** Plans (console-spec sections 1 and 9): 1 Starter .. 4 Enterprise; above 4 counts as 4. */
export const Plan = { starter: 1, basic: 2, premium: 3, enterprise: 4 } as const;
export type PlanNumber = (typeof Plan)[keyof typeof Plan];
export const DEFAULT_PLAN: PlanNumber = Plan.enterprise;
/** Every plan, smallest first (the plan page's columns). */
export const PLANS: readonly PlanNumber[] = [Plan.starter, Plan.basic, Plan.premium, Plan.enterprise];
export const PLAN_NAMES: Record<PlanNumber, string> = {
  1: 'starter',
  2: 'basic',
  3: 'premium',
  4: 'enterprise',
};

export function normalisePlan(plan: number | null | undefined): PlanNumber {
  if (plan === null || plan === undefined || !Number.isFinite(plan)) return DEFAULT_PLAN;
  if (plan >= 4) return 4;
  if (plan <= 1) return 1;
  return Math.trunc(plan) as PlanNumber;
}

/** userLimit null: unlimited (the spec's "unlimited when absent"). */
export type PlanFeatureSet = z.infer<typeof PlanFeaturesSchema>;

/** The spec's defaults for an unknown plan: 1 origin, 1 user, no support e-mail, no custom domain. */
export const DEFAULT_PLAN_FEATURES: PlanFeatureSet = {
  originLimit: 1,
  userLimit: 1,
  supportEmail: false,
  customDomain: false,
  s3Origins: false,
};

/**
 * Per-plan limits. The spec leaves the values "not shown"; these are ours, documented in
 * docs/plans.md: each step up lifts the limits a growing team hits first.
 */
export const PLAN_FEATURES: Record<PlanNumber, PlanFeatureSet> = {
  1: { originLimit: 1, userLimit: 3, supportEmail: false, customDomain: false, s3Origins: false },
  2: { originLimit: 5, userLimit: 10, supportEmail: true, customDomain: false, s3Origins: true },
  3: { originLimit: 20, userLimit: 30, supportEmail: true, customDomain: true, s3Origins: true },
  4: { originLimit: 1000, userLimit: null, supportEmail: true, customDomain: true, s3Origins: true },
};

export function planFeatures(plan: number | null | undefined): PlanFeatureSet {
  return PLAN_FEATURES[normalisePlan(plan)];
}
