import { useMutation, useQuery } from '@tanstack/react-query';
import type { OperationInput, Operations } from '@ukiyo/contract';
import { callApi } from '@/lib/api-client.ts';

export function useLogin() {
  return useMutation({
    mutationFn: (input: OperationInput<Operations['auth.login']>) => callApi('auth.login', input),
  });
}

export function useVerifyTotp() {
  return useMutation({
    mutationFn: (input: OperationInput<Operations['auth.verify_totp']>) => callApi('auth.verify_totp', input),
  });
}

export function useOrganizations() {
  return useQuery({
    queryKey: ['organization.list'],
    queryFn: ({ signal }) => callApi('organization.list', {}, { signal }),
  });
}

export function useChangeOrganization() {
  return useMutation({
    mutationFn: (organizationID: number) => callApi('auth.change_organization', { organizationID }),
  });
}

/**
 * Activation spends its token: one call per token, kept for the page's lifetime (a second
 * render, or React's development double effects, must not turn success into 'already activated').
 */
export function useActivation(token: string) {
  return useQuery({
    queryKey: ['user.activate', token],
    queryFn: () => callApi('user.activate', { token }),
    staleTime: Infinity,
    retry: false,
  });
}

export function useRequestPasswordReset() {
  return useMutation({
    mutationFn: (input: OperationInput<Operations['user.request_password_reset']>) =>
      callApi('user.request_password_reset', input),
  });
}

export function useResetPassword() {
  return useMutation({
    mutationFn: (input: OperationInput<Operations['user.reset_password']>) =>
      callApi('user.reset_password', input),
  });
}
