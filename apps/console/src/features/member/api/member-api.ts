import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { OperationInput, Operations } from '@ukiyo/contract';
import { callApi } from '@/lib/api-client.ts';

const USERS = ['user.list'] as const;

export function useUsers() {
  return useQuery({ queryKey: USERS, queryFn: ({ signal }) => callApi('user.list', {}, { signal }) });
}

export function useUser(userID: number) {
  return useQuery({
    queryKey: ['user.info', userID],
    queryFn: ({ signal }) => callApi('user.info', { userID }, { signal }),
    enabled: Number.isInteger(userID) && userID > 0,
  });
}

/** Organizations a restriction may name: those of the current account the caller reaches. */
export function useOrganizations() {
  return useQuery({
    queryKey: ['organization.list'],
    queryFn: ({ signal }) => callApi('organization.list', {}, { signal }),
  });
}

/** Every change to a member refreshes the list and that member's details. */
function useMemberMutation<Name extends 'user.add' | 'user.update' | 'user.set_enabled' | 'user.delete'>(
  name: Name,
) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (input: OperationInput<Operations[Name]>) => callApi(name, input),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: USERS });
      await queryClient.invalidateQueries({ queryKey: ['user.info'] });
    },
  });
}

export const useAddUser = () => useMemberMutation('user.add');
export const useUpdateUser = () => useMemberMutation('user.update');
export const useSetEnabled = () => useMemberMutation('user.set_enabled');
export const useDeleteUser = () => useMemberMutation('user.delete');
