import type { ReactNode } from 'react';
import Alert from 'react-bootstrap/Alert';
import Card from 'react-bootstrap/Card';
import { useTranslation } from 'react-i18next';
import { LoadingBlock } from './loading-block.tsx';
import { StackingTable } from './stacking-table.tsx';

/**
 * A list page's table in a card: a spinner while the query loads, `empty` once it has loaded no
 * rows, the table as soon as there are rows (also while a refetch runs, so the list does not
 * flicker). Query errors are reported by the page, which may use the same query elsewhere.
 */
export function DataTableCard({
  query,
  rowCount,
  head,
  children,
  testId,
  empty,
  emptyTestId,
  header,
  hover = true,
}: {
  query: { isPending: boolean; isSuccess: boolean };
  rowCount: number;
  /** The header cells. */
  head: ReactNode;
  /** The rows. */
  children: ReactNode;
  testId: string;
  empty: ReactNode;
  emptyTestId?: string;
  /** Above the table: a `Card.Header` with the list's title or filters. */
  header?: ReactNode;
  hover?: boolean;
}) {
  return (
    <Card className="shadow-sm border-0">
      {header}
      {query.isPending && <LoadingBlock />}
      {query.isSuccess && rowCount === 0 && (
        <Card.Body>
          <Alert variant="secondary" className="mb-0" data-testid={emptyTestId}>
            {empty}
          </Alert>
        </Card.Body>
      )}
      {rowCount > 0 && (
        <StackingTable hover={hover} className="mb-0 align-middle" data-testid={testId}>
          <thead className="table-light">
            <tr>{head}</tr>
          </thead>
          <tbody>{children}</tbody>
        </StackingTable>
      )}
    </Card>
  );
}

/** The last header cell, over the row buttons: named for screen readers only (see labelCells). */
export function ActionsHeader() {
  const { t } = useTranslation();
  return (
    <th scope="col" className="text-end" data-actions>
      <span className="visually-hidden">{t('common.actions')}</span>
    </th>
  );
}
