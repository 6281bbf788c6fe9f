import type { ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { StackingTable } from './stacking-table.tsx';

/**
 * A form's table of repeated entries (a channel's ladder, an origin's rules): a row per entry
 * with its inputs in the cells and its remove button last. On a phone the rows become cards.
 */
export function FieldTable({
  testId,
  columns,
  children,
}: {
  testId: string;
  columns: string[];
  children: ReactNode;
}) {
  const { t } = useTranslation();
  return (
    <StackingTable fields size="sm" className="align-top" data-testid={testId}>
      <thead>
        <tr>
          {columns.map((column) => (
            <th key={column} scope="col">
              {column}
            </th>
          ))}
          <th scope="col" data-actions>
            <span className="visually-hidden">{t('common.actions')}</span>
          </th>
        </tr>
      </thead>
      <tbody>{children}</tbody>
    </StackingTable>
  );
}
