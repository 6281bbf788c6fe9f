import type { ReactNode } from 'react';
import Button from 'react-bootstrap/Button';

/** Reads a list again on demand (a page that does not poll); off while a read runs. */
export function RefreshButton({
  query,
  testId,
  children,
}: {
  query: { isFetching: boolean; refetch: () => Promise<unknown> };
  testId: string;
  children: ReactNode;
}) {
  return (
    <Button
      variant="outline-secondary"
      disabled={query.isFetching}
      onClick={() => void query.refetch()}
      data-testid={testId}
    >
      {children}
    </Button>
  );
}
