import type { Organization, User } from '@ukiyo/contract';
import type { OrganizationRecord } from '../db/repositories/organizations.ts';
import type { SakuraAccountRow, UserRow } from '../db/tables.ts';

/** Rows to contract entities: the only place that knows both shapes. */
export function presentOrganization(row: OrganizationRecord): Organization {
  return {
    organizationID: row.id,
    name: row.name,
    memberCode: row.member_code,
    serviceCode: row.service_code,
    serviceDomain: row.service_domain,
    plan: row.plan,
    features: { imageConversion: !row.is_live, live: row.is_live },
    isLive: row.is_live,
    enableTextOverlay: row.enable_text_overlay,
    description: row.description,
    sakuraAccount: {
      sakuraAccountID: row.sakura_account_id,
      sakuraMemberCode: row.member_code,
      name: row.account_name,
    },
  };
}

export function presentUser(
  row: UserRow,
  account: SakuraAccountRow | null,
  restrictedTo: readonly number[],
): User {
  return {
    userID: row.id,
    emailAddress: row.email,
    fullName: row.full_name,
    permission: row.permission,
    enabled: row.enabled,
    activatedAt: row.activated_at?.toISOString() ?? null,
    sakuraAccount: account
      ? { sakuraAccountID: account.id, sakuraMemberCode: account.member_code, name: account.name }
      : null,
    restriction: { organizationIDs: [...restrictedTo] },
    totpEnabled: row.totp_enabled_at !== null,
  };
}
