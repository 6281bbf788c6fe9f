import { useQuery } from '@tanstack/react-query';
import { callApi } from '@/lib/api-client.ts';
import { useRefreshingMutation } from '@/lib/use-refreshing-mutation.ts';

const ORGANIZATIONS = ['admin.list_organizations'] as const;

export function useAdminOrganizations() {
  return useQuery({
    queryKey: ORGANIZATIONS,
    queryFn: ({ signal }) => callApi('admin.list_organizations', {}, { signal }),
  });
}

export const useRegister = () => useRefreshingMutation('admin.register', ORGANIZATIONS);
export const useUpdateOrganization = () => useRefreshingMutation('admin.update_organization', ORGANIZATIONS);

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

export const useRetryJob = () => useRefreshingMutation('admin.job_retry', DEAD_LETTERS);
