import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { OperationInput, Operations } from '@ukiyo/contract';
import { callApi } from '@/lib/api-client.ts';
import type { MonthPeriod } from '@/lib/usage-format.ts';

const CHANNELS = ['channel.list'] as const;
/** Connections, playlists and deletions change on the live server: the list follows them. */
const LIVE_POLL_MS = 3000;

export function useChannels() {
  return useQuery({
    queryKey: CHANNELS,
    queryFn: ({ signal }) => callApi('channel.list', {}, { signal }),
    refetchInterval: LIVE_POLL_MS,
  });
}

function useChannelMutation<Name extends 'channel.add' | 'channel.delete'>(name: Name) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (input: OperationInput<Operations[Name]>) => callApi(name, input),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: CHANNELS }),
  });
}

export const useAddChannel = () => useChannelMutation('channel.add');
export const useDeleteChannel = () => useChannelMutation('channel.delete');

/** A short-lived WHIP credential for the channel, from the signed-in session (the browser publisher's). */
export async function publishCredential(channelId: string): Promise<string> {
  return (await callApi('channel.publish_credential', { channelId })).credential;
}

export function useChannelStatistics(period: MonthPeriod) {
  return useQuery({
    queryKey: ['channel.statistics', period.from, period.to],
    queryFn: ({ signal }) => callApi('channel.statistics', { from: period.from, to: period.to }, { signal }),
    placeholderData: keepPreviousData,
  });
}
