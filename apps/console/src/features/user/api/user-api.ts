import { useMutation, useQuery } from '@tanstack/react-query';
import type { OperationInput, Operations } from '@ukiyo/contract';
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
