import { useMutation } from '@tanstack/react-query';
import type { OperationInput, Operations } from '@ukiyo/contract';
import { callApi } from '../../../lib/api-client.ts';

export function useUpdateOrganization() {
  return useMutation({
    mutationFn: (input: OperationInput<Operations['organization.update']>) =>
      callApi('organization.update', input),
  });
}
