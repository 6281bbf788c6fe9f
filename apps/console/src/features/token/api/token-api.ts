import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { OperationInput, Operations } from '@ukiyo/contract';
import { callApi } from '@/lib/api-client.ts';

export function useTokens(showDeleted: boolean) {
  return useQuery({
    queryKey: ['auth_token.list', showDeleted],
    queryFn: ({ signal }) => callApi('auth_token.list', { showDeleted }, { signal }),
  });
}

function useTokenMutation<Name extends 'auth_token.add' | 'auth_token.disable' | 'auth_token.delete'>(
  name: Name,
) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (input: OperationInput<Operations[Name]>) => callApi(name, input),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['auth_token.list'] }),
  });
}

export const useAddToken = () => useTokenMutation('auth_token.add');
export const useDisableToken = () => useTokenMutation('auth_token.disable');
export const useDeleteToken = () => useTokenMutation('auth_token.delete');
