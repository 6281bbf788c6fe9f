import { useMutation, useQueryClient, type QueryKey } from '@tanstack/react-query';
import type { OperationInput, OperationName, Operations } from '@ukiyo/contract';
import { callApi } from './api-client.ts';

/**
 * A call of one operation that changes what a query shows (a list the page holds): once the call
 * succeeds, every query under `refreshes` is fetched again.
 */
export function useRefreshingMutation<Name extends OperationName>(name: Name, refreshes: QueryKey) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (input: OperationInput<Operations[Name]>) => callApi(name, input),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: refreshes }),
  });
}
