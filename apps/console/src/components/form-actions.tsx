import type { ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { LinkButton } from './link-button.tsx';
import { SubmitButton } from './submit-button.tsx';

/** A form's submit button and the way back without saving: `{testIdPrefix}-submit` and `-cancel`. */
export function FormActions({
  busy,
  submitLabel,
  cancelLabel,
  cancelTo,
  testIdPrefix,
  className = 'd-flex gap-2 mt-4',
}: {
  busy: boolean;
  submitLabel: ReactNode;
  /** Default: "Cancel". */
  cancelLabel?: ReactNode;
  cancelTo: string;
  testIdPrefix: string;
  className?: string;
}) {
  const { t } = useTranslation();
  return (
    <div className={className}>
      <SubmitButton busy={busy} testId={`${testIdPrefix}-submit`}>
        {submitLabel}
      </SubmitButton>
      <LinkButton to={cancelTo} variant="outline-secondary" testId={`${testIdPrefix}-cancel`}>
        {cancelLabel ?? t('common.cancel')}
      </LinkButton>
    </div>
  );
}
