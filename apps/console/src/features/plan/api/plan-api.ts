import { useMutation, useQueryClient } from '@tanstack/react-query';
import { callApi } from '@/lib/api-client.ts';
import { PLAN_FEATURES } from '@/lib/plan-features.ts';

export function useChangePlan() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (newPlan: number) => callApi('organization.change_plan', { newPlan }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: PLAN_FEATURES }),
  });
}
