import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { callApi } from '@/lib/api-client.ts';
import { useRefreshingMutation } from '@/lib/use-refreshing-mutation.ts';
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

export const useAddChannel = () => useRefreshingMutation('channel.add', CHANNELS);
export const useDeleteChannel = () => useRefreshingMutation('channel.delete', CHANNELS);

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
