import { useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { PageHeader } from '@/components/page-header.tsx';
import { useReportQueryError } from '@/lib/api-errors.ts';
import { formatCount, formatGiB } from '@/lib/usage-format.ts';
import { useAdminStatistics } from '@/features/usage/api/usage-api.ts';
import {
  ADMIN_STATISTICS_COLUMNS as COLUMNS,
  sortRows,
  type Sort,
  type SortKey,
} from '@/features/usage/usage-tables.ts';
import { useSelectedMonth } from './month-picker.tsx';
import { OrganizationMonthTable } from './organization-month-table.tsx';

/** /admin/statistics: every organization's usage in one UTC month, sortable by any column. */
export function AdminStatisticsPage() {
  const { t, i18n } = useTranslation();
  const [selected, select] = useSelectedMonth();
  const statistics = useAdminStatistics(selected);
  useReportQueryError(statistics.error);
  // Busiest first: what an administrator looks for.
  const [sort, setSort] = useState<Sort>({ key: 'outboundBytes', descending: true });
  const language = i18n.language;
  const rows = useMemo(
    () => sortRows(statistics.data?.organizations ?? [], sort, language),
    [statistics.data, sort, language],
  );

  const sortBy = (key: SortKey, numeric: boolean) =>
    setSort((before) =>
      before.key === key ? { key, descending: !before.descending } : { key, descending: numeric },
    );

  return (
    <>
      <PageHeader title={t('title.adminStatistics')} lead={t('usage.adminStatisticsLead')} />
      <OrganizationMonthTable
        month={selected}
        onMonthChange={select}
        monthTestId="admin-stats-month"
        query={statistics}
        rowCount={rows.length}
        testId="admin-stats-table"
        head={COLUMNS.map((column) => {
          const active = sort.key === column.key;
          return (
            <th
              key={column.key}
              scope="col"
              className={column.numeric ? 'text-end' : undefined}
              aria-sort={active ? (sort.descending ? 'descending' : 'ascending') : 'none'}
            >
              <button
                type="button"
                className="btn btn-link p-0 fw-semibold text-reset text-decoration-none text-nowrap"
                onClick={() => sortBy(column.key, column.numeric)}
                data-testid={`admin-stats-sort-${column.key}`}
              >
                {t(column.labelKey)}
                <span className="ms-1 text-body-secondary" aria-hidden="true">
                  {active ? (sort.descending ? '▼' : '▲') : '⇅'}
                </span>
              </button>
            </th>
          );
        })}
      >
        {rows.map((row) => (
          <tr key={row.organizationID} data-testid="admin-stats-row" data-service-code={row.serviceCode}>
            <td className="text-nowrap">{row.memberCode}</td>
            <td className="text-nowrap">{row.serviceCode}</td>
            <td>{row.name}</td>
            <td className="text-end" data-testid="admin-stats-requests">
              {formatCount(row.requests, language)}
            </td>
            <td className="text-end" data-testid="admin-stats-outbound">
              {formatGiB(row.outboundBytes, language)}
            </td>
          </tr>
        ))}
      </OrganizationMonthTable>
    </>
  );
}
