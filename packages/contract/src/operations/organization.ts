import { z } from 'zod';
import { Organization, PlanFeatures, SakuraAccount, User } from '../entities.ts';
import { operation } from '../operation.ts';
import { Permission } from '../permissions.ts';
import { bool, email, empty, id, integer, newPassword, optionalText, requiredText } from '../validation.ts';

export const OrganizationInput = z.object({
  organizationID: z.number().int().default(-1),
  name: requiredText(100),
  serviceCode: requiredText(32),
  serviceDomain: optionalText(253),
  plan: integer(1, 4).default(4),
  isLive: bool().default(false),
  enableTextOverlay: bool().default(false),
  description: optionalText(1000),
});

export const NewUserInput = z.object({
  emailAddress: email(),
  fullName: requiredText(100),
  permission: integer(0, 127),
});

export const organizationOperations = {
  'organization.list': operation('organization.list', {
    input: empty(),
    output: z.object({ organizations: z.array(Organization) }),
    access: 'activated',
  }),
  'organization.plan_features': operation('organization.plan_features', {
    input: empty(),
    output: z.object({
      plan: z.number(),
      features: PlanFeatures,
      pendingPlan: z.number().nullable(),
      pendingPlanAt: z.string().nullable(),
    }),
    access: 'organization',
  }),
  'organization.change_plan': operation('organization.change_plan', {
    input: z.object({ newPlan: integer(1, 4) }),
    output: z.object({ plan: z.number(), pendingPlan: z.number().nullable(), effectiveAt: z.string() }),
    access: 'organization',
    permission: Permission.organization,
    organizationKind: 'image',
  }),
  'organization.update': operation('organization.update', {
    input: z.object({
      name: requiredText(100),
      serviceDomain: optionalText(253),
      description: optionalText(1000),
    }),
    output: z.object({ organization: Organization }),
    access: 'organization',
    permission: Permission.organization,
  }),
  'admin.list_organizations': operation('admin.list_organizations', {
    input: empty(),
    output: z.object({ organizations: z.array(Organization) }),
    access: 'activated',
    adminOnly: true,
  }),
  'admin.register': operation('admin.register', {
    input: z.object({
      user: NewUserInput,
      organization: OrganizationInput,
      sakuraAccount: z.object({
        sakuraAccountID: z.number().int().min(0).default(0),
        sakuraMemberCode: requiredText(32),
        name: requiredText(100),
      }),
      password: newPassword(),
    }),
    output: z.object({ user: User, organization: Organization, sakuraAccount: SakuraAccount }),
    access: 'activated',
    adminOnly: true,
  }),
  'admin.update_organization': operation('admin.update_organization', {
    input: z.object({ organization: OrganizationInput.extend({ organizationID: id() }) }),
    output: z.object({ organization: Organization }),
    access: 'activated',
    adminOnly: true,
  }),
};
