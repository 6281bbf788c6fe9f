import { useQuery } from '@tanstack/react-query';
import { callApi } from '@/lib/api-client.ts';
import { useRefreshingMutation } from '@/lib/use-refreshing-mutation.ts';

/** Public: the navbar reads `externalUrl` from it on every page, the status page the events. */
export function useStatusList() {
  return useQuery({
    queryKey: ['status.list'],
    queryFn: ({ signal }) => callApi('status.list', {}, { signal }),
    staleTime: 60_000,
  });
}

export const useSaveStatus = () => useRefreshingMutation('admin.status_save', ['status.list']);
export const useDeleteStatus = () => useRefreshingMutation('admin.status_delete', ['status.list']);
