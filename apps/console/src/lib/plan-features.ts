import { useQuery } from '@tanstack/react-query';
import { callApi } from './api-client.ts';

export const PLAN_FEATURES = ['organization.plan_features'] as const;

/** The current organization's plan and what it allows: limits, custom domains, S3 origins. */
export function usePlanFeatures() {
  return useQuery({
    queryKey: PLAN_FEATURES,
    queryFn: ({ signal }) => callApi('organization.plan_features', {}, { signal }),
  });
}
