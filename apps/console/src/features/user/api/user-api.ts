import { useInfiniteQuery, useMutation, useQuery } from '@tanstack/react-query';
import type { AuditKind, OperationInput, Operations } from '@ukiyo/contract';
import { callApi } from '@/lib/api-client.ts';

export function useUpdatePassword() {
  return useMutation({
    mutationFn: (input: OperationInput<Operations['user.update_password']>) =>
      callApi('user.update_password', input),
  });
}

export function useUpdateProfile() {
  return useMutation({
    mutationFn: (input: OperationInput<Operations['user.update']>) => callApi('user.update', input),
  });
}

export function useTotpBegin() {
  return useMutation({ mutationFn: () => callApi('user.totp_begin', {}) });
}

export function useTotpEnable() {
  return useMutation({ mutationFn: (code: string) => callApi('user.totp_enable', { code }) });
}

export function useTotpDisable() {
  return useMutation({ mutationFn: (password: string) => callApi('user.totp_disable', { password }) });
}

export function useRegenerateBackupCodes() {
  return useMutation({
    mutationFn: (password: string) => callApi('user.regenerate_backup_codes', { password }),
  });
}

export function useAuditEntries(limit: number) {
  return useQuery({
    queryKey: ['audit.list', limit],
    queryFn: ({ signal }) => callApi('audit.list', { limit }, { signal }),
    // Every login elsewhere adds a row: the list is read fresh each time it is shown.
    staleTime: 0,
  });
}

/** One's own trail, or the current organization's (member managers). */
export type AuditScope = 'self' | 'organization';
export interface AuditFilter {
  kind?: AuditKind;
  actor?: string;
  from?: string;
  to?: string;
}

const AUDIT_OPERATION = { self: 'audit.list', organization: 'audit.organization_list' } as const;
export const AUDIT_PAGE = 50;

/** A page of the audit trail; `cursor` is the previous page's `nextCursor`. */
export function fetchAuditPage(
  scope: AuditScope,
  filter: AuditFilter,
  cursor: number | undefined,
  limit: number,
  signal?: AbortSignal,
) {
  return callApi(AUDIT_OPERATION[scope], { ...filter, cursor, limit }, { signal });
}

/** The filtered trail, newest first, a page at a time. */
export function useAuditTrail(scope: AuditScope, filter: AuditFilter) {
  return useInfiniteQuery({
    queryKey: [AUDIT_OPERATION[scope], filter],
    queryFn: ({ pageParam, signal }) => fetchAuditPage(scope, filter, pageParam, AUDIT_PAGE, signal),
    initialPageParam: undefined as number | undefined,
    getNextPageParam: (page) => page.nextCursor ?? undefined,
    staleTime: 0,
  });
}
