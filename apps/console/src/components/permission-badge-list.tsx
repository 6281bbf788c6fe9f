import type { ReactNode } from 'react';
import Badge from 'react-bootstrap/Badge';

/**
 * Permission names as badges, the administrator one in red so it stands out in a list. Each badge
 * is `testId` with `data-permission`; an empty list shows `empty` instead.
 */
export function PermissionBadgeList<Name extends string>({
  names,
  label,
  testId,
  empty,
}: {
  names: readonly Name[];
  label: (name: Name) => ReactNode;
  testId: string;
  empty: ReactNode;
}) {
  if (names.length === 0) return <span className="text-body-secondary small">{empty}</span>;
  return (
    <div className="d-flex flex-wrap gap-1">
      {names.map((name) => (
        <Badge
          key={name}
          bg={name === 'admin' ? 'danger' : 'light'}
          text={name === 'admin' ? undefined : 'dark'}
          className={name === 'admin' ? '' : 'border'}
          data-testid={testId}
          data-permission={name}
        >
          {label(name)}
        </Badge>
      ))}
    </div>
  );
}
