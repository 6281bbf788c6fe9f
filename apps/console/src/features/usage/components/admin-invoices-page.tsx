import Button from 'react-bootstrap/Button';
import { useTranslation } from 'react-i18next';
import { PageHeader } from '@/components/page-header.tsx';
import { useReportQueryError } from '@/lib/api-errors.ts';
import { buildCsv, downloadCsv, formatCount, formatMoney, monthLabel } from '@/lib/usage-format.ts';
import { useInvoices } from '@/features/usage/api/usage-api.ts';
import { INVOICE_CSV_FIELDS } from '@/features/usage/usage-tables.ts';
import { useSelectedMonth } from './month-picker.tsx';
import { OrganizationMonthTable } from './organization-month-table.tsx';

/**
 * /admin/invoices: one row per organization for a UTC month, its transfer and requests from
 * metered usage and its amount by its plan's prices (plan_prices), and the same rows as a CSV
 * (UTF-8 with BOM) for the billing system.
 */
export function AdminInvoicesPage() {
  const { t, i18n } = useTranslation();
  const [selected, select] = useSelectedMonth();
  const invoices = useInvoices(selected);
  useReportQueryError(invoices.error);
  const rows = invoices.data?.rows ?? [];
  const gib = new Intl.NumberFormat(i18n.language === 'en' ? 'en-GB' : 'ja-JP', {
    minimumFractionDigits: 2,
    maximumFractionDigits: 2,
  });

  const download = () => {
    const csv = buildCsv(
      INVOICE_CSV_FIELDS,
      rows.map((row) => [
        row.memberId,
        row.serviceCd,
        row.name,
        row.transferGiB.toFixed(2),
        row.requests,
        row.amount ?? '',
        row.currency ?? '',
      ]),
    );
    downloadCsv(`invoices-${monthLabel(selected)}.csv`, csv);
  };

  return (
    <>
      <PageHeader
        title={t('title.adminInvoices')}
        lead={t('usage.invoicesLead')}
        actions={
          <Button
            variant="primary"
            disabled={!invoices.isSuccess || invoices.isPlaceholderData}
            onClick={download}
            data-testid="invoice-csv"
          >
            {t('usage.downloadCsv')}
          </Button>
        }
      />
      <OrganizationMonthTable
        month={selected}
        onMonthChange={select}
        monthTestId="invoice-month"
        query={invoices}
        rowCount={rows.length}
        testId="invoice-table"
        head={
          <>
            <th scope="col">
              {t('usage.memberCode')} <code className="small text-body-secondary">memberId</code>
            </th>
            <th scope="col">
              {t('usage.serviceCode')} <code className="small text-body-secondary">serviceCd</code>
            </th>
            <th scope="col">{t('usage.organizationName')}</th>
            <th scope="col" className="text-end">
              {t('usage.transferGiB')}
            </th>
            <th scope="col" className="text-end">
              {t('usage.requests')}
            </th>
            <th scope="col" className="text-end">
              {t('cost.amount')}
            </th>
          </>
        }
      >
        {rows.map((row) => (
          <tr
            key={`${row.memberId}/${row.serviceCd}`}
            data-testid="invoice-row"
            data-service-code={row.serviceCd}
          >
            <td className="text-nowrap">{row.memberId}</td>
            <td className="text-nowrap">{row.serviceCd}</td>
            <td>{row.name}</td>
            <td className="text-end" data-testid="invoice-transfer">
              {gib.format(row.transferGiB)}
            </td>
            <td className="text-end">{formatCount(row.requests, i18n.language)}</td>
            <td className="text-end text-nowrap" data-testid="invoice-amount">
              {row.amount === null || row.currency === null
                ? '–'
                : formatMoney(row.amount, row.currency, i18n.language)}
            </td>
          </tr>
        ))}
      </OrganizationMonthTable>
    </>
  );
}
