import { useQuery } from '@tanstack/react-query';
import { callApi } from '@/lib/api-client.ts';
import { useRefreshingMutation } from '@/lib/use-refreshing-mutation.ts';

export function useTokens(showDeleted: boolean) {
  return useQuery({
    queryKey: [...TOKENS, showDeleted],
    queryFn: ({ signal }) => callApi('auth_token.list', { showDeleted }, { signal }),
  });
}

const TOKENS = ['auth_token.list'] as const;

export const useAddToken = () => useRefreshingMutation('auth_token.add', TOKENS);
export const useDisableToken = () => useRefreshingMutation('auth_token.disable', TOKENS);
export const useDeleteToken = () => useRefreshingMutation('auth_token.delete', TOKENS);
