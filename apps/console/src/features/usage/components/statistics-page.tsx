import { useMemo, useState } from 'react';
import Alert from 'react-bootstrap/Alert';
import Button from 'react-bootstrap/Button';
import ButtonGroup from 'react-bootstrap/ButtonGroup';
import Card from 'react-bootstrap/Card';
import Col from 'react-bootstrap/Col';
import Row from 'react-bootstrap/Row';
import Table from 'react-bootstrap/Table';
import { useTranslation } from 'react-i18next';
import { useRouteTitle } from '../../../app/route-title.ts';
import { LoadingBlock } from '../../../components/loading-block.tsx';
import { PageHeader } from '../../../components/page-header.tsx';
import { useReportQueryError } from '../../../lib/api-errors.ts';
import { useSession } from '../../../lib/session.ts';
import {
  buildCsv,
  downloadCsv,
  formatCount,
  formatGiB,
  monthDays,
  monthLabel,
  toGiB,
} from '../../../lib/usage-format.ts';
import { useOriginStatistics } from '../api/usage-api.ts';
import { DailyChart, type ChartSeries } from './daily-chart.tsx';
import { MonthPicker, useSelectedMonth } from './month-picker.tsx';
import { UsagePanel } from './usage-panel.tsx';

/**
 * /statistics: this month's usage first, then any UTC month's requests and outbound traffic per
 * origin and per day (statistics.origins), with a CSV of the table. "HLS statistics" in a live
 * organization.
 */
export function StatisticsPage() {
  const { t, i18n } = useTranslation();
  const title = useRouteTitle();
  const { organization } = useSession();
  const [selected, select] = useSelectedMonth();
  const [metric, setMetric] = useState<'requests' | 'outbound'>('requests');
  const statistics = useOriginStatistics(selected);
  useReportQueryError(statistics.error);
  const language = i18n.language;
  const data = statistics.data;

  const days = useMemo(() => monthDays(selected.year, selected.month), [selected.year, selected.month]);
  const series = useMemo<ChartSeries[]>(() => {
    if (!data) return [];
    return data.origins.map((origin) => {
      const byDay = new Map(origin.daily.map((day) => [day.day, day]));
      return {
        name: origin.name,
        values: days.map((day) => {
          const usage = byDay.get(day);
          return usage ? (metric === 'outbound' ? usage.outboundBytes : usage.requests) : 0;
        }),
      };
    });
  }, [data, days, metric]);

  const downloadTable = () => {
    if (!data) return;
    const rows = data.origins.map((origin) => [
      origin.name,
      origin.stats.requests,
      toGiB(origin.stats.outboundBytes),
    ]);
    rows.push([t('usage.total'), data.total.requests, toGiB(data.total.outboundBytes)]);
    const csv = buildCsv(['origin', 'requests', 'outboundGiB'], rows);
    downloadCsv(`statistics-${organization?.serviceCode ?? 'organization'}-${monthLabel(selected)}.csv`, csv);
  };

  return (
    <>
      <PageHeader title={title} lead={t('usage.statisticsLead')} />
      <UsagePanel />
      <Card className="shadow-sm border-0">
        <Card.Header className="bg-body d-flex flex-wrap justify-content-between align-items-center gap-2">
          <MonthPicker value={selected} onChange={select} testId="stats-month" />
          <Button
            variant="outline-secondary"
            size="sm"
            disabled={!data}
            onClick={downloadTable}
            data-testid="stats-csv"
          >
            {t('usage.downloadCsv')}
          </Button>
        </Card.Header>
        {statistics.isPending && <LoadingBlock />}
        {data && (
          <Card.Body>
            <Row className="g-3 mb-3">
              <Col xs={12} sm={6}>
                <div className="border rounded-3 p-3">
                  <div className="small text-body-secondary">{t('usage.requests')}</div>
                  <div className="fs-4 fw-semibold" data-testid="stats-total-requests">
                    {formatCount(data.total.requests, language)}
                  </div>
                </div>
              </Col>
              <Col xs={12} sm={6}>
                <div className="border rounded-3 p-3">
                  <div className="small text-body-secondary">{t('usage.outbound')}</div>
                  <div className="fs-4 fw-semibold" data-testid="stats-total-outbound">
                    {formatGiB(data.total.outboundBytes, language)}
                    <span className="fs-6 fw-normal text-body-secondary ms-1">GiB</span>
                  </div>
                </div>
              </Col>
            </Row>
            <div className="d-flex flex-wrap justify-content-between align-items-center gap-2 mb-2">
              <h2 className="h6 mb-0">{t('usage.daily')}</h2>
              <ButtonGroup size="sm" aria-label={t('usage.metric')}>
                <Button
                  variant={metric === 'requests' ? 'secondary' : 'outline-secondary'}
                  aria-pressed={metric === 'requests'}
                  onClick={() => setMetric('requests')}
                  data-testid="stats-metric-requests"
                >
                  {t('usage.requests')}
                </Button>
                <Button
                  variant={metric === 'outbound' ? 'secondary' : 'outline-secondary'}
                  aria-pressed={metric === 'outbound'}
                  onClick={() => setMetric('outbound')}
                  data-testid="stats-metric-outbound"
                >
                  {t('usage.outboundGiB')}
                </Button>
              </ButtonGroup>
            </div>
            {data.origins.length === 0 ? (
              <Alert variant="secondary" className="mb-0" data-testid="stats-empty">
                {t('usage.noOrigins')}
              </Alert>
            ) : (
              <DailyChart days={days} series={series} metric={metric} />
            )}
          </Card.Body>
        )}
        {data && data.origins.length > 0 && (
          <Table responsive hover className="mb-0 align-middle" data-testid="stats-table">
            <thead className="table-light">
              <tr>
                <th scope="col">{t('usage.origin')}</th>
                <th scope="col" className="text-end">
                  {t('usage.requests')}
                </th>
                <th scope="col" className="text-end">
                  {t('usage.outboundGiB')}
                </th>
              </tr>
            </thead>
            <tbody>
              {data.origins.map((origin) => (
                <tr key={origin.originID} data-testid="stats-row" data-origin-name={origin.name}>
                  <td className="text-break">
                    <code>{origin.name}</code>
                  </td>
                  <td className="text-end" data-testid="stats-row-requests">
                    {formatCount(origin.stats.requests, language)}
                  </td>
                  <td className="text-end" data-testid="stats-row-outbound">
                    {formatGiB(origin.stats.outboundBytes, language)}
                  </td>
                </tr>
              ))}
            </tbody>
            <tfoot>
              <tr className="fw-semibold">
                <th scope="row">{t('usage.total')}</th>
                <td className="text-end">{formatCount(data.total.requests, language)}</td>
                <td className="text-end">{formatGiB(data.total.outboundBytes, language)}</td>
              </tr>
            </tfoot>
          </Table>
        )}
      </Card>
    </>
  );
}
