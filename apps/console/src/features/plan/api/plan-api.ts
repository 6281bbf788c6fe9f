import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { callApi } from '../../../lib/api-client.ts';

const PLAN_FEATURES = ['organization.plan_features'] as const;

export function usePlanFeatures() {
  return useQuery({
    queryKey: PLAN_FEATURES,
    queryFn: ({ signal }) => callApi('organization.plan_features', {}, { signal }),
  });
}

export function useChangePlan() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (newPlan: number) => callApi('organization.change_plan', { newPlan }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: PLAN_FEATURES }),
  });
}
