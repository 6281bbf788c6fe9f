import { useNavigate } from 'react-router';
import type { Invalids, Origin } from '@ukiyo/contract';
import { paths } from '@/app/paths.ts';
import { classifyApiError, useApiErrorHandler } from '@/lib/api-errors.ts';
import { flash } from '@/lib/flash.ts';
import { formInvalids, type OriginFormValues } from '@/features/origin/origin-form.ts';

/** The list's navigation state after a save: which origin to check. */
export interface OriginCheckState {
  checkOriginID: number;
}

/**
 * The create and update pages' saving: success goes back to the list with the spec's message,
 * where the saved origin is checked at once (OriginCheckState); refused fields go back to the
 * form; a domain in use is the custom domain's error; an unexplained failure is "Failed to
 * create new origin" / "Failed to update the origin".
 */
export function useOriginSave(
  send: (values: OriginFormValues) => Promise<{ origin: Origin }>,
  messages: { saved: string; failed: string },
) {
  const navigate = useNavigate();
  const handleError = useApiErrorHandler();
  return async (values: OriginFormValues): Promise<Invalids | undefined> => {
    try {
      const { origin } = await send(values);
      flash.next({ variant: 'success', key: messages.saved, action: 'origin' });
      const state: OriginCheckState = { checkOriginID: origin.originID };
      await navigate(paths.originIndex(), { state });
      return undefined;
    } catch (error) {
      const failure = classifyApiError(error);
      if (failure.kind === 'validation') return formInvalids(failure.invalids, values.kind);
      if (failure.kind === 'message' && failure.key === 'error.domainInUse')
        return { originName: ['error.domainInUse'] };
      if (failure.kind === 'internal')
        flash.now({ variant: 'danger', key: messages.failed, action: 'origin' });
      else handleError(error, { action: 'origin' });
      return undefined;
    }
  };
}
