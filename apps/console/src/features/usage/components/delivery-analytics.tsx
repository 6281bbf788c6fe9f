import { useMemo, useState } from 'react';
import ButtonGroup from 'react-bootstrap/ButtonGroup';
import Card from 'react-bootstrap/Card';
import Col from 'react-bootstrap/Col';
import Form from 'react-bootstrap/Form';
import Row from 'react-bootstrap/Row';
import Table from 'react-bootstrap/Table';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import type { OperationOutput, Operations } from '@ukiyo/contract';
import { paths } from '@/app/paths.ts';
import { LoadingBlock } from '@/components/loading-block.tsx';
import { StackingTable } from '@/components/stacking-table.tsx';
import { useReportQueryError } from '@/lib/api-errors.ts';
import { formatBytes, formatCount, monthDays, type YearMonth } from '@/lib/usage-format.ts';
import { useOriginStatistics, type Granularity } from '@/features/usage/api/usage-api.ts';
import { EChartFrame, type ChartOption } from './echart-frame.tsx';
import { UsageFigures } from './usage-figure.tsx';
import { ChoiceButton } from '@/components/choice-button.tsx';

type Statistics = OperationOutput<Operations['statistics.origins']>;
type Figures = Statistics['total'];
type TopEntry = Statistics['top']['paths'][number];
type TopList = keyof Statistics['top'];

const TOP_LISTS: readonly TopList[] = ['paths', 'pathsByBytes', 'transforms', 'formats', 'errors'];
const STATUS_CLASSES = ['ok', 'notModified', 'clientError', 'serverError'] as const;
const CACHE_RESULTS = ['memory', 'disk', 'shared', 'miss', 'coalesced', 'stale'] as const;

function percent(part: number, whole: number, language: string): string {
  if (whole === 0) return '–';
  return new Intl.NumberFormat(language, { style: 'percent', maximumFractionDigits: 1 }).format(part / whole);
}

/** A breakdown as rows of label, count and share of the whole. */
function Breakdown({
  title,
  rows,
  testId,
}: {
  title: string;
  rows: { key: string; label: string; count: number }[];
  testId: string;
}) {
  const { t, i18n } = useTranslation();
  const whole = rows.reduce((sum, row) => sum + row.count, 0);
  return (
    // Three short columns fit a phone: a plain table, not one stacking into cards.
    <Table size="sm" className="mb-0 align-middle" data-testid={testId}>
      <thead className="table-light">
        <tr>
          <th scope="col">{title}</th>
          <th scope="col" className="text-end">
            {t('usage.requests')}
          </th>
          <th scope="col" className="text-end">
            {t('analytics.share')}
          </th>
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr key={row.key} data-testid={`${testId}-${row.key}`}>
            <td>{row.label}</td>
            <td className="text-end">{formatCount(row.count, i18n.language)}</td>
            <td className="text-end">{percent(row.count, whole, i18n.language)}</td>
          </tr>
        ))}
      </tbody>
    </Table>
  );
}

/**
 * /statistics, image organizations: what the edge counted of its answers in the chosen month,
 * for every origin or one: status classes, where answers came from and the hit ratio, bytes
 * fetched and saved by conversion, a trend per day or hour, and the top paths,
 * transformations, formats and error reasons (statistics.origins).
 */
export function DeliveryAnalytics({ month }: { month: YearMonth }) {
  const { t, i18n } = useTranslation();
  const language = i18n.language;
  const [originID, setOriginID] = useState<number | undefined>();
  const [granularity, setGranularity] = useState<Granularity>('day');
  const [list, setList] = useState<TopList>('paths');
  const statistics = useOriginStatistics(month, { originID, granularity });
  useReportQueryError(statistics.error);
  const data = statistics.data;
  const origin = data?.origins.find((entry) => entry.originID === originID);
  const figures: Figures | undefined = originID === undefined ? data?.total : origin?.stats;

  const trend = useMemo(() => {
    if (!data) return [];
    if (granularity === 'hour')
      return (data.hourly ?? []).map(({ hour, ...rest }) => ({ at: hour, ...rest }));
    const daily = originID === undefined ? data.daily : (origin?.daily ?? []);
    const byDay = new Map(daily.map((day) => [day.day, day]));
    return monthDays(month.year, month.month).map((day) => {
      const known = byDay.get(day);
      return { at: day, requests: known?.requests ?? 0, hitRatio: known?.hitRatio ?? null };
    });
  }, [data, granularity, originID, origin, month.year, month.month]);

  const option = useMemo<ChartOption>(
    () => ({
      animation: false,
      // Room under the legend for the axis names, which sit above each axis.
      grid: { left: 8, right: 8, top: 64, bottom: 8, containLabel: true },
      legend: { top: 0 },
      tooltip: { trigger: 'axis' },
      xAxis: {
        type: 'category',
        // Days as their date, hours as "date hour" (UTC).
        data: trend.map((point) =>
          granularity === 'hour' ? `${point.at.slice(8, 10)} ${point.at.slice(11, 13)}` : point.at.slice(8),
        ),
      },
      yAxis: [
        { type: 'value', minInterval: 1, name: t('usage.requests'), nameTextStyle: { align: 'left' } },
        {
          type: 'value',
          min: 0,
          max: 100,
          name: t('analytics.hitRatioAxis'),
          nameTextStyle: { align: 'right' },
        },
      ],
      series: [
        { name: t('usage.requests'), type: 'bar', data: trend.map((point) => point.requests) },
        {
          name: t('analytics.hitRatio'),
          type: 'line',
          yAxisIndex: 1,
          connectNulls: false,
          data: trend.map((point) =>
            point.hitRatio === null ? null : Math.round(point.hitRatio * 1000) / 10,
          ),
        },
      ],
    }),
    [trend, granularity, t],
  );

  const entries = data?.top[list] ?? [];
  const errorCount = figures ? figures.status.clientError + figures.status.serverError : 0;

  return (
    <Card className="shadow-sm border-0 mt-4" data-testid="analytics">
      <Card.Header className="bg-body d-flex flex-wrap justify-content-between align-items-center gap-2">
        <h2 className="h6 mb-0">{t('analytics.title')}</h2>
        <div className="d-flex flex-wrap gap-2">
          <Form.Select
            size="sm"
            className="w-auto mw-100"
            aria-label={t('analytics.origin')}
            value={originID ?? ''}
            onChange={(event) =>
              setOriginID(event.target.value === '' ? undefined : Number(event.target.value))
            }
            data-testid="analytics-origin"
          >
            <option value="">{t('analytics.allOrigins')}</option>
            {data?.origins.map((entry) => (
              <option key={entry.originID} value={entry.originID}>
                {entry.name}
              </option>
            ))}
          </Form.Select>
          <ButtonGroup size="sm" aria-label={t('analytics.granularity')}>
            {(['day', 'hour'] as const).map((value) => (
              <ChoiceButton
                key={value}
                chosen={granularity === value}
                onChoose={() => setGranularity(value)}
                testId={`analytics-granularity-${value}`}
              >
                {t(`analytics.per.${value}`)}
              </ChoiceButton>
            ))}
          </ButtonGroup>
        </div>
      </Card.Header>
      {statistics.isPending && <LoadingBlock />}
      {figures && data && (
        <Card.Body>
          <UsageFigures
            className="g-3 mb-3"
            columns={{ xs: 12, sm: 6, lg: 3 }}
            figures={[
              {
                label: t('analytics.hitRatio'),
                value: figures.hitRatio === null ? '–' : percent(figures.hitRatio, 1, language),
                testId: 'analytics-hit-ratio',
              },
              {
                label: t('analytics.saved'),
                value: formatBytes(figures.savedBytes, language),
                note: t('analytics.savedShare', {
                  share: percent(figures.savedBytes, figures.sourceBytes, language),
                }),
                testId: 'analytics-saved',
              },
              {
                label: t('analytics.originBytes'),
                value: formatBytes(figures.originBytes, language),
                testId: 'analytics-origin-bytes',
              },
              {
                label: t('analytics.errors'),
                value: formatCount(errorCount, language),
                note: t('analytics.errorShare', { share: percent(errorCount, figures.requests, language) }),
                testId: 'analytics-errors',
              },
            ]}
          />
          <Row className="g-3 mb-3">
            <Col xs={12} lg={6}>
              <Breakdown
                title={t('analytics.status')}
                testId="analytics-status"
                rows={STATUS_CLASSES.map((key) => ({
                  key,
                  label: t(`analytics.statusClass.${key}`),
                  count: figures.status[key],
                }))}
              />
            </Col>
            <Col xs={12} lg={6}>
              <Breakdown
                title={t('analytics.cacheResult')}
                testId="analytics-cache"
                rows={CACHE_RESULTS.map((key) => ({
                  key,
                  label: t(`analytics.cache.${key}`),
                  count: figures.cache[key],
                }))}
              />
            </Col>
          </Row>
          <h3 className="h6">
            {t(granularity === 'hour' ? 'analytics.trendHourly' : 'analytics.trendDaily')}
          </h3>
          <EChartFrame
            option={option}
            label={t('analytics.trendLabel')}
            height={280}
            testId="analytics-chart"
          />
          <div className="d-flex flex-wrap justify-content-between align-items-center gap-2 mt-4 mb-2">
            <h3 className="h6 mb-0">{t('analytics.top')}</h3>
            <div className="d-flex flex-wrap gap-1" role="group" aria-label={t('analytics.top')}>
              {TOP_LISTS.map((value) => (
                <ChoiceButton
                  key={value}
                  size="sm"
                  chosen={list === value}
                  onChoose={() => setList(value)}
                  testId={`analytics-top-${value}`}
                >
                  {t(`analytics.list.${value}`)}
                </ChoiceButton>
              ))}
            </div>
          </div>
          <TopTable list={list} entries={entries} originID={originID} />
          <p className="small text-body-secondary mt-2 mb-0">{t('analytics.topNote')}</p>
        </Card.Body>
      )}
    </Card>
  );
}

function TopTable({
  list,
  entries,
  originID,
}: {
  list: TopList;
  entries: TopEntry[];
  originID: number | undefined;
}) {
  const { t, i18n } = useTranslation();
  const language = i18n.language;
  if (entries.length === 0)
    return (
      <p className="text-body-secondary mb-0" data-testid="analytics-top-empty">
        {t('analytics.topEmpty')}
      </p>
    );
  const errors = list === 'errors';
  const keyLabel = (key: string) =>
    errors ? (i18n.exists(`preview.edgeError.${key}`) ? t(`preview.edgeError.${key}`) : key) : key;
  return (
    <StackingTable size="sm" className="mb-0 align-middle" data-testid="analytics-top-table">
      <thead className="table-light">
        <tr>
          <th scope="col">{t(`analytics.column.${list}`)}</th>
          <th scope="col" className="text-end">
            {t('usage.requests')}
          </th>
          {!errors && (
            <th scope="col" className="text-end">
              {t('analytics.delivered')}
            </th>
          )}
          {list === 'formats' && (
            <th scope="col" className="text-end">
              {t('analytics.savedBytes')}
            </th>
          )}
        </tr>
      </thead>
      <tbody>
        {entries.map((entry) => (
          <tr key={entry.key} data-testid="analytics-top-row" data-key={entry.key}>
            <td className="text-break">
              {errors ? (
                <>
                  {keyLabel(entry.key)}{' '}
                  {entry.key.startsWith('origin-') && (
                    <Link to={originID === undefined ? paths.originIndex() : paths.originUpdate(originID)}>
                      {t('analytics.checkOrigin')}
                    </Link>
                  )}
                </>
              ) : (
                <code>{entry.key || '–'}</code>
              )}
            </td>
            <td className="text-end">{formatCount(entry.requests, language)}</td>
            {!errors && <td className="text-end text-nowrap">{formatBytes(entry.bytes, language)}</td>}
            {list === 'formats' && (
              <td className="text-end text-nowrap">{formatBytes(entry.savedBytes, language)}</td>
            )}
          </tr>
        ))}
      </tbody>
    </StackingTable>
  );
}
