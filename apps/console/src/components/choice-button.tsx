import type { ReactNode } from 'react';
import Button from 'react-bootstrap/Button';

/**
 * One of a group of buttons that pick one view (a metric, a scope, a granularity): the chosen
 * one is filled and pressed for screen readers.
 */
export function ChoiceButton({
  chosen,
  onChoose,
  testId,
  size,
  children,
}: {
  chosen: boolean;
  onChoose: () => void;
  testId: string;
  /** Inside a `ButtonGroup` the group sets the size. */
  size?: 'sm';
  children: ReactNode;
}) {
  return (
    <Button
      size={size}
      variant={chosen ? 'secondary' : 'outline-secondary'}
      aria-pressed={chosen}
      onClick={onChoose}
      data-testid={testId}
    >
      {children}
    </Button>
  );
}
