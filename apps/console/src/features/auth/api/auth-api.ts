import { useMutation, useQuery } from '@tanstack/react-query';
import type { OperationInput, Operations } from '@ukiyo/contract';
import { callApi } from '../../../lib/api-client.ts';

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
