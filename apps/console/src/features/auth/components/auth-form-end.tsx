import type { ReactNode } from 'react';
import { SubmitButton } from '@/components/submit-button.tsx';

/** The end of a signed-out form: its full-width submit button and, below it, the way elsewhere. */
export function AuthFormEnd({
  busy,
  testId,
  label,
  children,
}: {
  busy: boolean;
  testId: string;
  label: ReactNode;
  /** A link or button under the submit button (back, forgotten password). */
  children?: ReactNode;
}) {
  return (
    <>
      <SubmitButton busy={busy} testId={testId} className="w-100">
        {label}
      </SubmitButton>
      {children && <div className="text-center mt-3 small">{children}</div>}
    </>
  );
}
