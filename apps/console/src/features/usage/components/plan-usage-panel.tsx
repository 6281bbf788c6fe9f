import { useMemo } from 'react';
import Card from 'react-bootstrap/Card';
import Col from 'react-bootstrap/Col';
import ProgressBar from 'react-bootstrap/ProgressBar';
import Row from 'react-bootstrap/Row';
import { useTranslation } from 'react-i18next';
import { normalisePlan, PLAN_NAMES } from '@ukiyo/contract';
import { formatCount, formatGiB, formatMoney, monthDays } from '@/lib/usage-format.ts';
import { useDashboardUsage } from '@/features/usage/api/usage-api.ts';
import { DailyChart } from './daily-chart.tsx';
import { UsageFigures } from './usage-figure.tsx';

/** One measure this month: so far against what the plan includes, last month and the projection. */
function Measure({
  label,
  soFar,
  included,
  lastMonth,
  projected,
  format,
  testId,
}: {
  label: string;
  soFar: number;
  included: number | undefined;
  lastMonth: number;
  projected: number;
  format: (value: number) => string;
  testId: string;
}) {
  const { t } = useTranslation();
  const share = included ? soFar / included : undefined;
  const trend = lastMonth === 0 ? undefined : projected / lastMonth - 1;
  return (
    <Col xs={12} md={6}>
      <div className="border rounded-3 p-3 h-100" data-testid={testId}>
        <div className="d-flex flex-wrap justify-content-between gap-2">
          <span className="small text-body-secondary">{label}</span>
          {included !== undefined && (
            <span className="small text-body-secondary" data-testid={`${testId}-included`}>
              {t('cost.ofIncluded', { included: format(included) })}
            </span>
          )}
        </div>
        <div className="fs-4 fw-semibold">{format(soFar)}</div>
        {share !== undefined && (
          <ProgressBar
            now={Math.min(100, share * 100)}
            variant={share > 1 ? 'danger' : share > 0.8 ? 'warning' : 'primary'}
            className="my-2"
            style={{ height: 6 }}
            aria-label={t('cost.quotaUsed')}
          />
        )}
        <dl className="row small mb-0">
          <dt className="col-7 fw-normal text-body-secondary">{t('cost.projected')}</dt>
          <dd className="col-5 text-end mb-0" data-testid={`${testId}-projected`}>
            {format(projected)}
          </dd>
          <dt className="col-7 fw-normal text-body-secondary">{t('cost.lastMonth')}</dt>
          <dd className="col-5 text-end mb-0" data-testid={`${testId}-last-month`}>
            {format(lastMonth)}
          </dd>
          {trend !== undefined && (
            <>
              <dt className="col-7 fw-normal text-body-secondary">{t('cost.trend')}</dt>
              <dd className="col-5 text-end mb-0">
                {trend >= 0 ? '+' : ''}
                {Math.round(trend * 100)}%
              </dd>
            </>
          )}
        </dl>
      </div>
    </Col>
  );
}

/**
 * The dashboard's month against the plan: requests and traffic so far beside what the plan
 * includes, last month and a projection to the end of the billing period; the plan's charge so
 * far and projected, from plan_prices; and this month's requests per day.
 */
export function PlanUsagePanel() {
  const { t, i18n } = useTranslation();
  const language = i18n.language;
  const { data } = useDashboardUsage();
  const days = useMemo(() => {
    if (!data) return [];
    const from = new Date(data.billingPeriod.from);
    return monthDays(from.getUTCFullYear(), from.getUTCMonth() + 1);
  }, [data]);
  const series = useMemo(() => {
    const byDay = new Map(data?.daily.map((day) => [day.day, day.requests]));
    return [{ name: t('usage.requests'), values: days.map((day) => byDay.get(day) ?? 0) }];
  }, [data, days, t]);
  if (!data) return null;
  const { price, cost } = data;
  const gib = (bytes: number) => `${formatGiB(bytes, language)} GiB`;
  const count = (value: number) => formatCount(value, language);
  return (
    <Card className="shadow-sm border-0 mb-4" data-testid="plan-usage">
      <Card.Header className="bg-body d-flex flex-wrap justify-content-between align-items-baseline gap-2">
        <h2 className="h6 mb-0">{t('cost.title')}</h2>
        {price && (
          <span className="small">
            {t(`plan.name.${PLAN_NAMES[normalisePlan(price.plan)]}`)} ·{' '}
            {t('cost.monthlyFee', { fee: formatMoney(price.monthlyFee, price.currency, language) })}
          </span>
        )}
      </Card.Header>
      <Card.Body>
        <Row className="g-3 mb-3">
          <Measure
            label={t('usage.requests')}
            soFar={data.requests}
            included={price?.includedRequests}
            lastMonth={data.lastMonth.requests}
            projected={data.projected.requests}
            format={count}
            testId="plan-usage-requests"
          />
          <Measure
            label={t('usage.outbound')}
            soFar={data.outboundBytes}
            included={price?.includedBytes}
            lastMonth={data.lastMonth.outboundBytes}
            projected={data.projected.outboundBytes}
            format={gib}
            testId="plan-usage-outbound"
          />
        </Row>
        {price && cost && (
          <UsageFigures
            className="g-3 mb-3"
            columns={{ xs: 12, sm: 6 }}
            figures={[
              {
                label: t('cost.soFar'),
                value: formatMoney(cost.soFar, price.currency, language),
                testId: 'plan-usage-cost',
              },
              {
                label: t('cost.projectedCost'),
                value: formatMoney(cost.projected, price.currency, language),
                testId: 'plan-usage-projected-cost',
              },
            ]}
          />
        )}
        <DailyChart
          days={days}
          series={series}
          metric="requests"
          requestsAxis={t('usage.requests')}
          label={t('cost.dailyLabel')}
        />
        <p className="small text-body-secondary mt-2 mb-0">
          {t(price ? 'cost.note' : 'cost.noPrice', {
            per10k: price ? formatMoney(price.per10kRequests, price.currency, language) : '',
            perGiB: price ? formatMoney(price.perGiB, price.currency, language) : '',
          })}
        </p>
      </Card.Body>
    </Card>
  );
}
