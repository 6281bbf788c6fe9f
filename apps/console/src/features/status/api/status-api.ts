import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { OperationInput, Operations } from '@ukiyo/contract';
import { callApi } from '@/lib/api-client.ts';

/** Public: the navbar reads `externalUrl` from it on every page, the status page the events. */
export function useStatusList() {
  return useQuery({
    queryKey: ['status.list'],
    queryFn: ({ signal }) => callApi('status.list', {}, { signal }),
    staleTime: 60_000,
  });
}

function useStatusMutation<Name extends 'admin.status_save' | 'admin.status_delete'>(name: Name) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (input: OperationInput<Operations[Name]>) => callApi(name, input),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['status.list'] }),
  });
}

export const useSaveStatus = () => useStatusMutation('admin.status_save');
export const useDeleteStatus = () => useStatusMutation('admin.status_delete');
