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

/** Per-origin and daily usage of the current organization in one UTC month. */
export function useOriginStatistics({ year, month }: YearMonth) {
  const { from, to } = monthPeriod(year, month);
  return useQuery({
    queryKey: ['statistics.origins', from, to],
    queryFn: ({ signal }) => callApi('statistics.origins', { from, to }, { signal }),
    placeholderData: keepPreviousData,
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
