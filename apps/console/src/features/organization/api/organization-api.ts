import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { OperationInput, Operations } from '@ukiyo/contract';
import { callApi } from '@/lib/api-client.ts';

export function useUpdateOrganization() {
  return useMutation({
    mutationFn: (input: OperationInput<Operations['organization.update']>) =>
      callApi('organization.update', input),
  });
}

const WEBHOOK_SECRET = ['organization.webhook_secret'] as const;

export function useWebhookSecret() {
  return useQuery({
    queryKey: WEBHOOK_SECRET,
    queryFn: ({ signal }) => callApi('organization.webhook_secret', {}, { signal }),
  });
}

export function useRotateWebhookSecret() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => callApi('organization.rotate_webhook_secret', {}),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: WEBHOOK_SECRET }),
  });
}
