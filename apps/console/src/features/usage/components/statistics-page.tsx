import { useMemo, useState } from 'react';
import Alert from 'react-bootstrap/Alert';
import Button from 'react-bootstrap/Button';
import ButtonGroup from 'react-bootstrap/ButtonGroup';
import Card from 'react-bootstrap/Card';
import Col from 'react-bootstrap/Col';
import Row from 'react-bootstrap/Row';
import { useTranslation } from 'react-i18next';
import { useRouteTitle } from '@/app/route-title.ts';
import { LoadingBlock } from '@/components/loading-block.tsx';
import { PageHeader } from '@/components/page-header.tsx';
import { StackingTable } from '@/components/stacking-table.tsx';
import { useReportQueryError } from '@/lib/api-errors.ts';
import { useSession } from '@/lib/session.ts';
import {
  buildCsv,
  downloadCsv,
  formatCount,
  formatGiB,
  monthDays,
  monthLabel,
  monthPeriod,
  toGiB,
  type YearMonth,
} from '@/lib/usage-format.ts';
import { useChannelStatistics } from '@/features/channel/api/channel-api.ts';
import { useOriginStatistics } from '@/features/usage/api/usage-api.ts';
import { DailyChart, type ChartSeries } from './daily-chart.tsx';
import { DeliveryAnalytics } from './delivery-analytics.tsx';
import { MonthPicker, useSelectedMonth } from './month-picker.tsx';
import { UsagePanel } from './usage-panel.tsx';
import { ChoiceButton } from '@/components/choice-button.tsx';

interface Usage {
  requests: number;
  outboundBytes: number;
}

/** What the page shows, whichever kind of organization: one row and one series per item. */
interface Report {
  items: (Usage & { key: string; name: string; daily: DayUsage[] })[];
  total: Usage;
  /** The CSV's columns after requests and traffic, and their values on a day without records. */
  csvHeaders: string[];
  csvBlank: (string | number)[];
}

/** Translation keys and CSV names that differ between image and live organizations. */
interface Wording {
  lead: string;
  item: string;
  requests: string;
  outbound: string;
  outboundGiB: string;
  chartRequests: string;
  chartOutbound: string;
  empty: string;
  csvFile: string;
}

/** A day of an item: its usage, and the CSV's further columns of that day. */
type DayUsage = Usage & { day: string; csv?: (string | number)[] };

/** An item's usage on each of `days`, none where it has no record: what the chart draws. */
function usageByDay(days: readonly string[], daily: readonly DayUsage[]): DayUsage[] {
  const byDay = new Map(daily.map((usage) => [usage.day, usage]));
  return days.map((day) => ({ day, requests: 0, outboundBytes: 0, ...byDay.get(day) }));
}

const ORIGIN_WORDING: Wording = {
  lead: 'usage.statisticsLead',
  item: 'usage.origin',
  requests: 'usage.requests',
  outbound: 'usage.outbound',
  outboundGiB: 'usage.outboundGiB',
  chartRequests: 'usage.chartRequestsLabel',
  chartOutbound: 'usage.chartOutboundLabel',
  empty: 'usage.noOrigins',
  csvFile: 'statistics',
};

const HLS_WORDING: Wording = {
  lead: 'usage.hlsStatisticsLead',
  item: 'channel.id',
  requests: 'channel.hlsRequests',
  outbound: 'usage.hlsOutbound',
  outboundGiB: 'channel.hlsGiB',
  chartRequests: 'usage.hlsChartRequestsLabel',
  chartOutbound: 'usage.hlsChartOutboundLabel',
  empty: 'channel.statisticsEmpty',
  csvFile: 'hls-statistics',
};

/**
 * /statistics: this month's usage first, then any UTC month per day and per item, with a CSV
 * of the table. Image organizations see requests and outbound traffic per origin
 * (statistics.origins); live organizations see "HLS statistics": playlist and segment requests
 * and their traffic per channel (channel.statistics).
 */
export function StatisticsPage() {
  const { organization } = useSession();
  const [selected, select] = useSelectedMonth();
  const month = { selected, select };
  return organization?.isLive ? <HlsStatistics {...month} /> : <OriginStatistics {...month} />;
}

interface MonthProps {
  selected: YearMonth;
  select: (month: YearMonth) => void;
}

function OriginStatistics(month: MonthProps) {
  const { t } = useTranslation();
  const statistics = useOriginStatistics(month.selected);
  useReportQueryError(statistics.error);
  const data = statistics.data;
  const report = useMemo<Report | undefined>(
    () =>
      data && {
        items: data.origins.map((origin) => ({
          key: String(origin.originID),
          name: origin.name,
          ...origin.stats,
          daily: origin.daily.map((day) => ({
            ...day,
            csv: [
              day.status.ok,
              day.status.notModified,
              day.status.clientError,
              day.status.serverError,
              day.hitRatio === null ? '' : Math.round(day.hitRatio * 1000) / 10,
              toGiB(day.originBytes),
              toGiB(day.savedBytes),
            ],
          })),
        })),
        total: data.total,
        csvHeaders: [
          ...(['ok', 'notModified', 'clientError', 'serverError'] as const).map((status) =>
            t(`analytics.statusClass.${status}`),
          ),
          t('analytics.csv.hitRatio'),
          t('analytics.csv.originGiB'),
          t('analytics.csv.savedGiB'),
        ],
        csvBlank: [0, 0, 0, 0, '', 0, 0],
      },
    [data, t],
  );
  return (
    <>
      <StatisticsView {...month} report={report} loading={statistics.isPending} wording={ORIGIN_WORDING} />
      <DeliveryAnalytics month={month.selected} />
    </>
  );
}

function HlsStatistics(month: MonthProps) {
  const { t } = useTranslation();
  const statistics = useChannelStatistics(monthPeriod(month.selected.year, month.selected.month));
  useReportQueryError(statistics.error);
  const data = statistics.data;
  const report = useMemo<Report | undefined>(() => {
    if (!data) return undefined;
    const hls = (usage: { hlsRequests: number; hlsBytesOut: number }): Usage => ({
      requests: usage.hlsRequests,
      outboundBytes: usage.hlsBytesOut,
    });
    return {
      items: data.channels.map((channel) => ({
        key: channel.channelId,
        name: channel.channelId,
        ...hls(channel),
        daily: channel.daily.map((day) => ({
          day: day.day,
          ...hls(day),
          csv: [
            day.connections,
            Math.round(day.connectedSeconds / 60),
            day.maxConcurrent,
            Math.round(day.publishingSeconds / 60),
            day.hlsMaxViewers,
          ],
        })),
      })),
      total: hls(data.total),
      csvHeaders: [
        t('usage.webrtcCumulative'),
        t('usage.csv.connectedMinutes'),
        t('usage.maxConcurrent'),
        t('usage.csv.publishingMinutes'),
        t('channel.hlsMaxViewers'),
      ],
      csvBlank: [0, 0, 0, 0, 0],
    };
  }, [data, t]);
  return <StatisticsView {...month} report={report} loading={statistics.isPending} wording={HLS_WORDING} />;
}

function StatisticsView({
  selected,
  select,
  report,
  loading,
  wording,
}: MonthProps & { report: Report | undefined; loading: boolean; wording: Wording }) {
  const { t, i18n } = useTranslation();
  const title = useRouteTitle();
  const { organization } = useSession();
  const [metric, setMetric] = useState<'requests' | 'outbound'>('requests');
  const language = i18n.language;

  const days = useMemo(() => monthDays(selected.year, selected.month), [selected.year, selected.month]);
  const series = useMemo<ChartSeries[]>(() => {
    if (!report) return [];
    return report.items.map((item) => ({
      name: item.name,
      values: usageByDay(days, item.daily).map((usage) =>
        metric === 'outbound' ? usage.outboundBytes : usage.requests,
      ),
    }));
  }, [report, days, metric]);

  // The chart's figures as rows, item by item and day by day (GiB rounded as the chart shows
  // it), under headers in the language of the screen: one language per file.
  const downloadTable = () => {
    if (!report) return;
    const rows = report.items.flatMap((item) =>
      usageByDay(days, item.daily).map((usage) => [
        usage.day,
        item.name,
        usage.requests,
        toGiB(usage.outboundBytes),
        ...(usage.csv ?? report.csvBlank),
      ]),
    );
    const header = [
      t('usage.date'),
      t(wording.item),
      t(wording.requests),
      t(wording.outboundGiB),
      ...report.csvHeaders,
    ];
    const csv = buildCsv(header, rows);
    downloadCsv(
      `${wording.csvFile}-${organization?.serviceCode ?? 'organization'}-${monthLabel(selected)}.csv`,
      csv,
    );
  };

  const metricButton = (value: typeof metric, label: string) => (
    <ChoiceButton
      chosen={metric === value}
      onChoose={() => setMetric(value)}
      testId={`stats-metric-${value}`}
    >
      {label}
    </ChoiceButton>
  );

  return (
    <>
      <PageHeader title={title} lead={t(wording.lead)} />
      <UsagePanel />
      <Card className="shadow-sm border-0">
        <Card.Header className="bg-body d-flex flex-wrap justify-content-between align-items-center gap-2">
          <MonthPicker value={selected} onChange={select} testId="stats-month" />
          <Button
            variant="outline-secondary"
            size="sm"
            disabled={!report}
            onClick={downloadTable}
            data-testid="stats-csv"
          >
            {t('usage.downloadCsv')}
          </Button>
        </Card.Header>
        {loading && <LoadingBlock />}
        {report && (
          <Card.Body>
            <Row className="g-3 mb-3">
              <Col xs={12} sm={6}>
                <div className="border rounded-3 p-3">
                  <div className="small text-body-secondary">{t(wording.requests)}</div>
                  <div className="fs-4 fw-semibold" data-testid="stats-total-requests">
                    {formatCount(report.total.requests, language)}
                  </div>
                </div>
              </Col>
              <Col xs={12} sm={6}>
                <div className="border rounded-3 p-3">
                  <div className="small text-body-secondary">{t(wording.outbound)}</div>
                  <div className="fs-4 fw-semibold" data-testid="stats-total-outbound">
                    {formatGiB(report.total.outboundBytes, language)}
                    <span className="fs-6 fw-normal text-body-secondary ms-1">GiB</span>
                  </div>
                </div>
              </Col>
            </Row>
            <div className="d-flex flex-wrap justify-content-between align-items-center gap-2 mb-2">
              <h2 className="h6 mb-0">{t('usage.daily')}</h2>
              <ButtonGroup size="sm" aria-label={t('usage.metric')}>
                {metricButton('requests', t(wording.requests))}
                {metricButton('outbound', t(wording.outboundGiB))}
              </ButtonGroup>
            </div>
            {report.items.length === 0 ? (
              <Alert variant="secondary" className="mb-0" data-testid="stats-empty">
                {t(wording.empty)}
              </Alert>
            ) : (
              <DailyChart
                days={days}
                series={series}
                metric={metric}
                requestsAxis={t(wording.requests)}
                label={t(metric === 'outbound' ? wording.chartOutbound : wording.chartRequests)}
              />
            )}
          </Card.Body>
        )}
        {report && report.items.length > 0 && (
          <StackingTable hover className="mb-0 align-middle" data-testid="stats-table">
            <thead className="table-light">
              <tr>
                <th scope="col">{t(wording.item)}</th>
                <th scope="col" className="text-end">
                  {t(wording.requests)}
                </th>
                <th scope="col" className="text-end">
                  {t(wording.outboundGiB)}
                </th>
              </tr>
            </thead>
            <tbody>
              {report.items.map((item) => (
                <tr key={item.key} data-testid="stats-row" data-item-name={item.name}>
                  <td>
                    <code>{item.name}</code>
                  </td>
                  <td className="text-end" data-testid="stats-row-requests">
                    {formatCount(item.requests, language)}
                  </td>
                  <td className="text-end" data-testid="stats-row-outbound">
                    {formatGiB(item.outboundBytes, language)}
                  </td>
                </tr>
              ))}
            </tbody>
            <tfoot>
              <tr className="fw-semibold">
                <th scope="row">{t('usage.total')}</th>
                <td className="text-end">{formatCount(report.total.requests, language)}</td>
                <td className="text-end">{formatGiB(report.total.outboundBytes, language)}</td>
              </tr>
            </tfoot>
          </StackingTable>
        )}
      </Card>
    </>
  );
}
