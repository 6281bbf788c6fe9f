import type { ReactNode } from 'react';
import Alert from 'react-bootstrap/Alert';
import Card from 'react-bootstrap/Card';
import { useTranslation } from 'react-i18next';
import { LoadingBlock } from './loading-block.tsx';
import { StackingTable } from './stacking-table.tsx';

/** A column's header: its text, or its text and the cell's classes (e.g. `text-end` over numbers). */
export type Column = string | { label: string; className: string };

/**
 * A list page's table in a card: a spinner while the query loads, `empty` once it has loaded no
 * rows, the table as soon as there are rows (also while a refetch runs, so the list does not
 * flicker). Query errors are reported by the page, which may use the same query elsewhere.
 */
export function DataTableCard({
  query,
  rowCount,
  columns = [],
  head,
  actions = false,
  children,
  testId,
  empty,
  emptyTestId,
  header,
  hover = true,
}: {
  query: { isPending: boolean; isSuccess: boolean };
  rowCount: number;
  columns?: Column[];
  /** Header cells of the table's own, before `columns` (sort buttons, markup in a label). */
  head?: ReactNode;
  /** The last column holds each row's buttons. */
  actions?: boolean;
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
            <tr>
              {head}
              {columns.map((column) =>
                typeof column === 'string' ? (
                  <th key={column} scope="col">
                    {column}
                  </th>
                ) : (
                  <th key={column.label} scope="col" className={column.className}>
                    {column.label}
                  </th>
                ),
              )}
              {actions && <ActionsHeader />}
            </tr>
          </thead>
          <tbody>{children}</tbody>
        </StackingTable>
      )}
    </Card>
  );
}

/** The last header cell, over the row buttons: named for screen readers only (see labelCells). */
function ActionsHeader() {
  const { t } = useTranslation();
  return (
    <th scope="col" className="text-end" data-actions>
      <span className="visually-hidden">{t('common.actions')}</span>
    </th>
  );
}
