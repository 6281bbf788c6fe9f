import Alert from 'react-bootstrap/Alert';
import Button from 'react-bootstrap/Button';
import Card from 'react-bootstrap/Card';
import Table from 'react-bootstrap/Table';
import { useTranslation } from 'react-i18next';
import { LoadingBlock } from '../../../components/loading-block.tsx';
import { PageHeader } from '../../../components/page-header.tsx';
import { useReportQueryError } from '../../../lib/api-errors.ts';
import { buildCsv, downloadCsv, monthLabel } from '../../../lib/usage-format.ts';
import { useInvoices } from '../api/usage-api.ts';
import { INVOICE_CSV_FIELDS } from '../usage-tables.ts';
import { MonthPicker, useSelectedMonth } from './month-picker.tsx';

/**
 * /admin/invoices: one row per organization for a UTC month, its transfer computed from metered
 * usage, and the same rows as a CSV (UTF-8 with BOM) for the billing system.
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
      rows.map((row) => [row.memberId, row.serviceCd, row.name, row.transferGiB.toFixed(2)]),
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
      <Card className="shadow-sm border-0">
        <Card.Header className="bg-body py-2">
          <MonthPicker value={selected} onChange={select} testId="invoice-month" />
        </Card.Header>
        {invoices.isPending && <LoadingBlock />}
        {invoices.isSuccess && rows.length === 0 && (
          <Card.Body>
            <Alert variant="secondary" className="mb-0">
              {t('usage.noOrganizations')}
            </Alert>
          </Card.Body>
        )}
        {rows.length > 0 && (
          <Table responsive hover className="mb-0 align-middle" data-testid="invoice-table">
            <thead className="table-light">
              <tr>
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
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => (
                <tr
                  key={`${row.memberId}/${row.serviceCd}`}
                  data-testid="invoice-row"
                  data-service-code={row.serviceCd}
                >
                  <td className="text-nowrap">{row.memberId}</td>
                  <td className="text-nowrap">{row.serviceCd}</td>
                  <td className="text-break">{row.name}</td>
                  <td className="text-end" data-testid="invoice-transfer">
                    {gib.format(row.transferGiB)}
                  </td>
                </tr>
              ))}
            </tbody>
          </Table>
        )}
      </Card>
    </>
  );
}
