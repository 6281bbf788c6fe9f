import { useMutation } from '@tanstack/react-query';
import type { OperationInput, Operations } from '@ukiyo/contract';
import { callApi } from '@/lib/api-client.ts';

export function useSendHelpRequest() {
  return useMutation({
    mutationFn: (input: OperationInput<Operations['user.mail']>) => callApi('user.mail', input),
  });
}
