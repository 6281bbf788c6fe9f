import type { ReactNode } from 'react';
import { Link } from 'react-router';

/** A link inside the console that looks like a button (`btn btn-{size} btn-{variant}`). */
export function LinkButton({
  to,
  variant,
  size,
  className,
  testId,
  children,
}: {
  to: string;
  variant: string;
  size?: 'sm' | 'lg';
  className?: string;
  testId?: string;
  children: ReactNode;
}) {
  const classes = ['btn', size && `btn-${size}`, `btn-${variant}`, className].filter(Boolean).join(' ');
  return (
    <Link to={to} className={classes} data-testid={testId}>
      {children}
    </Link>
  );
}
