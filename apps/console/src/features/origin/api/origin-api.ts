import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { OriginStatus, type OperationInput, type Operations } from '@ukiyo/contract';
import { callApi } from '@/lib/api-client.ts';

const ORIGINS = ['origin.list'] as const;
/** While an origin is Updating the edges are loading it: ask again until every one has settled. */
const SETTLING_POLL_MS = 2000;

export function useOrigins() {
  return useQuery({
    queryKey: ORIGINS,
    queryFn: ({ signal }) => callApi('origin.list', {}, { signal }),
    refetchInterval: (query) =>
      query.state.data?.origins.some((origin) => origin.status === OriginStatus.updating)
        ? SETTLING_POLL_MS
        : false,
  });
}

/** The origins of the current organization, for choosers (cache, preview): any member may list them. */
export function useOriginChoices() {
  return useQuery({
    queryKey: ['origin.list_minimum'],
    queryFn: ({ signal }) => callApi('origin.list_minimum', {}, { signal }),
  });
}

export function useOrigin(originID: number) {
  return useQuery({
    queryKey: ['origin.get', originID],
    queryFn: ({ signal }) => callApi('origin.get', { originID }, { signal }),
    enabled: Number.isInteger(originID) && originID > 0,
    retry: false,
    refetchInterval: (query) =>
      query.state.data?.origin.status === OriginStatus.updating ? SETTLING_POLL_MS : false,
  });
}

/**
 * What fetching `path` of the origin through the edge's fetch code gives now. Each run is a
 * real fetch, rate limited per user: it runs once per request (`run`), never again by itself.
 */
export function useOriginCheck(originID: number, path: string, run: number) {
  return useQuery({
    queryKey: ['origin.check', originID, path, run],
    queryFn: ({ signal }) => callApi('origin.check', { originID, path }, { signal }),
    staleTime: Infinity,
    gcTime: 0,
    retry: false,
    refetchOnWindowFocus: false,
  });
}

/** Every change to an origin refreshes the lists and that origin's details. */
function useOriginMutation<
  Name extends 'origin.add' | 'origin.update' | 'origin.delete' | 'origin.upload_tls_certificate',
>(name: Name) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (input: OperationInput<Operations[Name]>) => callApi(name, input),
    onSuccess: async () => {
      await Promise.all([
        queryClient.invalidateQueries({ queryKey: ['origin.list'] }),
        queryClient.invalidateQueries({ queryKey: ['origin.list_minimum'] }),
        // A deleted origin's page is being left: refetching it would only find it gone.
        queryClient.invalidateQueries({
          queryKey: ['origin.get'],
          refetchType: name === 'origin.delete' ? 'none' : 'active',
        }),
      ]);
    },
  });
}

export const useAddOrigin = () => useOriginMutation('origin.add');
export const useUpdateOrigin = () => useOriginMutation('origin.update');
export const useDeleteOrigin = () => useOriginMutation('origin.delete');
export const useUploadCertificate = () => useOriginMutation('origin.upload_tls_certificate');
