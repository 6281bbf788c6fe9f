import Form from 'react-bootstrap/Form';
import type { FieldError as HookFieldError } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { translateRef } from '@/lib/i18n.ts';

/**
 * A field's error under its control. Form errors hold message references (from the contract's
 * schemas or the server's `invalids`), translated here in the current language.
 */
export function FieldError({
  error,
  block = false,
}: {
  error: Pick<HookFieldError, 'message'> | undefined;
  /** Shown even without an invalid input beside it (checkbox groups, custom controls). */
  block?: boolean;
}) {
  const { t } = useTranslation();
  if (!error?.message) return null;
  return (
    <Form.Control.Feedback type="invalid" className={block ? 'd-block' : undefined}>
      {translateRef(t, error.message)}
    </Form.Control.Feedback>
  );
}
