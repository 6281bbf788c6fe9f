import type { ReactNode } from 'react';
import { DataTableCard, type Column } from '@/components/data-table-card.tsx';
import { PageHeader } from '@/components/page-header.tsx';
import { RefreshButton } from '@/components/refresh-button.tsx';

/**
 * An administrator's page over records the server keeps (failed jobs, outgoing mail): the
 * heading with a button that reads them again, and their table, whose rows hold text to read
 * rather than links (no hover). Test IDs: `{testId}-refresh`, `{testId}-table`, `{testId}-empty`.
 */
export function AdminListPage({
  title,
  lead,
  refreshLabel,
  query,
  rowCount,
  testId,
  empty,
  columns,
  children,
}: {
  title: string;
  lead: string;
  refreshLabel: string;
  query: { isPending: boolean; isSuccess: boolean; isFetching: boolean; refetch: () => Promise<unknown> };
  rowCount: number;
  testId: string;
  empty: string;
  columns: Column[];
  /** The rows; the last column holds each row's button. */
  children: ReactNode;
}) {
  return (
    <>
      <PageHeader
        title={title}
        lead={lead}
        actions={
          <RefreshButton query={query} testId={`${testId}-refresh`}>
            {refreshLabel}
          </RefreshButton>
        }
      />
      <DataTableCard
        query={query}
        rowCount={rowCount}
        testId={`${testId}-table`}
        hover={false}
        empty={empty}
        emptyTestId={`${testId}-empty`}
        columns={columns}
        actions
      >
        {children}
      </DataTableCard>
    </>
  );
}
