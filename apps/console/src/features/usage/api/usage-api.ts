import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { callApi } from '@/lib/api-client.ts';
import { monthPeriod, type YearMonth } from '@/lib/usage-format.ts';

/** This billing period's usage of the current organization. */
export function useDashboardUsage() {
  return useQuery({
    queryKey: ['statistics.dashboard'],
    queryFn: ({ signal }) => callApi('statistics.dashboard', {}, { signal }),
  });
}

export type Granularity = 'day' | 'hour';

/**
 * Per-origin and daily usage and analytics of the current organization in one UTC month; the
 * top lists (and the hourly series) of one origin when `originID` is given.
 */
export function useOriginStatistics(
  { year, month }: YearMonth,
  { originID, granularity = 'day' }: { originID?: number; granularity?: Granularity } = {},
) {
  const { from, to } = monthPeriod(year, month);
  return useQuery({
    queryKey: ['statistics.origins', from, to, originID, granularity],
    queryFn: ({ signal }) => callApi('statistics.origins', { from, to, originID, granularity }, { signal }),
    placeholderData: keepPreviousData,
  });
}

/** Every plan's prices. */
export function usePlanPrices() {
  return useQuery({
    queryKey: ['plan.prices'],
    queryFn: ({ signal }) => callApi('plan.prices', {}, { signal }),
    staleTime: Infinity,
  });
}

export function useAdminStatistics({ year, month }: YearMonth) {
  return useQuery({
    queryKey: ['admin.statistics', year, month],
    queryFn: ({ signal }) => callApi('admin.statistics', { year, month }, { signal }),
    placeholderData: keepPreviousData,
  });
}

export function useInvoices({ year, month }: YearMonth) {
  return useQuery({
    queryKey: ['admin.invoices', year, month],
    queryFn: ({ signal }) => callApi('admin.invoices', { year, month }, { signal }),
    placeholderData: keepPreviousData,
  });
}
