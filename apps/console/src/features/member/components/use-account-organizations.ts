import type { UseQueryResult } from '@tanstack/react-query';
import type { Organization } from '@ukiyo/contract';
import { useReportQueryError } from '@/lib/api-errors.ts';

/**
 * The organizations a member's restriction may name: those of the current organization's
 * account (an administrator reaches every account's, which the server would refuse here).
 */
export function useAccountOrganizations(
  query: UseQueryResult<{ organizations: Organization[] }>,
  current: Organization | null,
): Organization[] {
  useReportQueryError(query.error);
  const accountID = current?.sakuraAccount.sakuraAccountID;
  return (query.data?.organizations ?? []).filter(
    (organization) => organization.sakuraAccount.sakuraAccountID === accountID,
  );
}
