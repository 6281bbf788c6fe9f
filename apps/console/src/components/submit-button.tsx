import type { ReactNode } from 'react';
import Button from 'react-bootstrap/Button';
import Spinner from 'react-bootstrap/Spinner';

/** A form's submit button, busy while its call runs. */
export function SubmitButton({
  busy,
  testId,
  children,
  variant = 'primary',
  className,
}: {
  busy: boolean;
  testId: string;
  children: ReactNode;
  variant?: string;
  className?: string;
}) {
  return (
    <Button type="submit" variant={variant} disabled={busy} className={className} data-testid={testId}>
      {busy && <Spinner size="sm" className="me-2" aria-hidden="true" />}
      {children}
    </Button>
  );
}
