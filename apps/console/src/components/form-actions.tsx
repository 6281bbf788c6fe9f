import type { ReactNode } from 'react';
import { Link } from 'react-router';
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
  cancelLabel: ReactNode;
  cancelTo: string;
  testIdPrefix: string;
  className?: string;
}) {
  return (
    <div className={className}>
      <SubmitButton busy={busy} testId={`${testIdPrefix}-submit`}>
        {submitLabel}
      </SubmitButton>
      <Link to={cancelTo} className="btn btn-outline-secondary" data-testid={`${testIdPrefix}-cancel`}>
        {cancelLabel}
      </Link>
    </div>
  );
}
