import { useMutation } from '@tanstack/react-query';
import type { OperationInput, Operations } from '@ukiyo/contract';
import { callApi } from '../../../lib/api-client.ts';

export function useUpdatePassword() {
  return useMutation({
    mutationFn: (input: OperationInput<Operations['user.update_password']>) =>
      callApi('user.update_password', input),
  });
}
