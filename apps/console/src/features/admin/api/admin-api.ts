import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { OperationInput, Operations } from '@ukiyo/contract';
import { callApi } from '@/lib/api-client.ts';

const ORGANIZATIONS = ['admin.list_organizations'] as const;

export function useAdminOrganizations() {
  return useQuery({
    queryKey: ORGANIZATIONS,
    queryFn: ({ signal }) => callApi('admin.list_organizations', {}, { signal }),
  });
}

export function useRegister() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (input: OperationInput<Operations['admin.register']>) => callApi('admin.register', input),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ORGANIZATIONS }),
  });
}

export function useUpdateOrganization() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (input: OperationInput<Operations['admin.update_organization']>) =>
      callApi('admin.update_organization', input),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ORGANIZATIONS }),
  });
}

export function useOutbox() {
  return useQuery({
    queryKey: ['admin.outbox_list'],
    queryFn: ({ signal }) => callApi('admin.outbox_list', {}, { signal }),
    // New mails arrive with every registration and reset request elsewhere.
    staleTime: 0,
  });
}

const DEAD_LETTERS = ['admin.job_failed_list'] as const;

export function useDeadLetters() {
  return useQuery({
    queryKey: DEAD_LETTERS,
    queryFn: ({ signal }) => callApi('admin.job_failed_list', {}, { signal }),
    staleTime: 0,
  });
}

export function useRetryJob() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (input: OperationInput<Operations['admin.job_retry']>) => callApi('admin.job_retry', input),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: DEAD_LETTERS }),
  });
}
