import { useCallback, useEffect } from 'react';
import { useNavigate } from 'react-router';
import type { FieldValues, Path, UseFormSetError } from 'react-hook-form';
import { isErrorCode, type Invalids, type MessageKey } from '@ukiyo/contract';
import { paths } from '@/app/paths.ts';
import { ApiError } from './api-client.ts';
import { flash } from './flash.ts';
import { queryClient } from './query-client.ts';
import { clearSession, getSession } from './session.ts';

/** What the console does about a failed call (console-spec section 8). */
export type ApiFailure =
  | { kind: 'aborted' }
  | { kind: 'session' }
  | { kind: 'validation'; invalids: Invalids }
  | { kind: 'notActivated' }
  | { kind: 'message'; key: MessageKey; params: Record<string, string | number> }
  | { kind: 'internal' };

export function classifyApiError(error: unknown): ApiFailure {
  if (error instanceof DOMException && error.name === 'AbortError') return { kind: 'aborted' };
  if (!(error instanceof ApiError)) return { kind: 'internal' };
  // 403 means only "no valid session", whatever the body says.
  if (error.status === 403) return { kind: 'session' };
  if (error.code === 'validation error') return { kind: 'validation', invalids: error.invalids };
  if (error.code === 'not activated') return { kind: 'notActivated' };
  if (isErrorCode(error.code) && error.code !== 'internal error') {
    return { kind: 'message', key: error.messageKey, params: error.params };
  }
  return { kind: 'internal' };
}

/**
 * Puts the server's `invalids` on the form's fields (the dot paths of the contract's schemas
 * are react-hook-form's paths). Messages stay message references: they are translated where
 * shown, so switching the language re-translates them.
 */
export function applyInvalids<T extends FieldValues>(setError: UseFormSetError<T>, invalids: Invalids): void {
  let focused = false;
  for (const [field, refs] of Object.entries(invalids)) {
    const [first] = refs;
    if (field === '' || first === undefined) continue;
    // The first invalid field takes the focus, which scrolls a long form to it.
    setError(field as Path<T>, { type: 'server', message: first }, { shouldFocus: !focused });
    focused = true;
  }
}

/**
 * The central handler for failed calls: the one place that turns an error into a flash, a form
 * error or a redirect. Pages handle the few codes they explain in place, then hand over the rest,
 * naming the `action` that failed (see flash.ts) unless the failure is the page's own (a query).
 */
export function useApiErrorHandler() {
  const navigate = useNavigate();
  return useCallback(
    <T extends FieldValues>(
      error: unknown,
      { setError, action }: { setError?: UseFormSetError<T>; action?: string } = {},
    ): void => {
      const failure = classifyApiError(error);
      const about = action === undefined ? {} : { action };
      switch (failure.kind) {
        case 'aborted':
          return;
        case 'session':
          flash.next({ variant: 'danger', key: 'error.sessionInvalid' });
          clearSession();
          void navigate(paths.login());
          return;
        case 'notActivated': {
          const { user } = getSession();
          flash.next({ variant: 'warning', key: 'error.notActivated' });
          void navigate(user ? paths.updatePassword(user.userID) : paths.login());
          return;
        }
        case 'validation':
          // The summary too: an invalid field may not be on this form (or below the fold).
          if (setError) applyInvalids(setError, failure.invalids);
          flash.now({ variant: 'danger', key: 'error.invalidInputs', ...about });
          return;
        case 'message':
          flash.now({ variant: 'danger', key: failure.key, params: failure.params, ...about });
          return;
        case 'internal':
          flash.now({ variant: 'danger', key: 'error.internal', ...about });
      }
    },
    [navigate],
  );
}

/**
 * A query's failure goes through the same handler as a mutation's (once per failure). A lost
 * session is left to useSessionLossRedirect, which hears every query's.
 */
export function useReportQueryError(error: unknown): void {
  const handleError = useApiErrorHandler();
  useEffect(() => {
    if (error && classifyApiError(error).kind !== 'session') handleError(error);
  }, [error, handleError]);
}

/**
 * Whether the record a page is about (by the ID in its URL) is missing: an ID that cannot be
 * one, or a 404 from loading it. The page says so once, in place; other failures of the query
 * go to the flash bar as `useReportQueryError` sends them.
 */
export function useRecordNotFound(id: number, query: { error: unknown }): boolean {
  const notFound =
    !Number.isInteger(id) || id <= 0 || (query.error instanceof ApiError && query.error.status === 404);
  useReportQueryError(notFound ? null : query.error);
  return notFound;
}

/**
 * Any query refused for want of a session (console-spec section 8) leads to the login page with
 * the message, whether or not its page reports failures: a member disabled while logged in is
 * told why, not left on a page that silently stopped loading. Mounted once, in the layout.
 */
export function useSessionLossRedirect(): void {
  const handleError = useApiErrorHandler();
  useEffect(
    () =>
      queryClient.getQueryCache().subscribe((event) => {
        if (event.type !== 'updated' || event.action.type !== 'error') return;
        if (classifyApiError(event.action.error).kind === 'session') handleError(event.action.error);
      }),
    [handleError],
  );
}
