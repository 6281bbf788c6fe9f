import type { BaseSyntheticEvent } from 'react';
import type { FieldValues, Path, UseFormReturn, UseFormSetError } from 'react-hook-form';
import type { ErrorCode } from '@ukiyo/contract';
import { ApiError } from './api-client.ts';
import { useApiErrorHandler } from './api-errors.ts';

/**
 * A form's submit handler: checks the form with its schema, sends it, and hands a failed call to
 * the central error handler (its `invalids` land on the fields), naming the `action` that failed.
 * `explain` takes the refusals a page explains in place: it returns true for those it did.
 */
export function useFormSubmit<T extends FieldValues, Context, Output>(
  form: Pick<UseFormReturn<T, Context, Output>, 'handleSubmit' | 'setError'>,
  {
    action,
    send,
    explain,
  }: {
    action: string;
    send: (values: Output) => Promise<unknown>;
    explain?: (error: unknown) => boolean;
  },
): (event?: BaseSyntheticEvent) => void {
  const handleError = useApiErrorHandler();
  const submit = form.handleSubmit(async (values) => {
    try {
      await send(values);
    } catch (error) {
      if (!explain?.(error)) handleError(error, { setError: form.setError, action });
    }
  });
  return (event) => void submit(event);
}

/** An `explain` for `useFormSubmit` that shows the refusals with these codes on one field. */
export function refusalOnField<T extends FieldValues>(
  setError: UseFormSetError<T>,
  field: Path<T>,
  codes: readonly ErrorCode[],
): (error: unknown) => boolean {
  return (error) => {
    if (!(error instanceof ApiError) || !(codes as readonly string[]).includes(error.code)) return false;
    setError(field, { type: 'server', message: error.messageKey });
    return true;
  };
}
