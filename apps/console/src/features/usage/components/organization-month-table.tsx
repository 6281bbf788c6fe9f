import type { ReactNode } from 'react';
import Card from 'react-bootstrap/Card';
import { useTranslation } from 'react-i18next';
import { DataTableCard } from '@/components/data-table-card.tsx';
import type { YearMonth } from '@/lib/usage-format.ts';
import { MonthPicker } from './month-picker.tsx';

/** The administrator's pages' table of every organization in one UTC month, picked above it. */
export function OrganizationMonthTable({
  month,
  onMonthChange,
  monthTestId,
  query,
  rowCount,
  testId,
  head,
  children,
}: {
  month: YearMonth;
  onMonthChange: (next: YearMonth) => void;
  monthTestId: string;
  query: { isPending: boolean; isSuccess: boolean };
  rowCount: number;
  testId: string;
  head: ReactNode;
  children: ReactNode;
}) {
  const { t } = useTranslation();
  return (
    <DataTableCard
      query={query}
      rowCount={rowCount}
      testId={testId}
      empty={t('usage.noOrganizations')}
      header={
        <Card.Header className="bg-body py-2">
          <MonthPicker value={month} onChange={onMonthChange} testId={monthTestId} />
        </Card.Header>
      }
      head={head}
    >
      {children}
    </DataTableCard>
  );
}
