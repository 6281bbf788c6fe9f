import Card from 'react-bootstrap/Card';
import { useTranslation } from 'react-i18next';
import { LoadingBlock } from '@/components/loading-block.tsx';
import { useReportQueryError } from '@/lib/api-errors.ts';
import { formatUtcDate } from '@/lib/format.ts';
import { useSession } from '@/lib/session.ts';
import { formatCount, formatGiB, splitDuration } from '@/lib/usage-format.ts';
import { useDashboardUsage } from '@/features/usage/api/usage-api.ts';
import { UsageFigures, type Figure } from './usage-figure.tsx';

/**
 * The dashboard's monthly usage (console-spec section 3, "Dashboard usage"): the current billing
 * period, one calendar month in UTC, with its requests and outbound traffic; live organizations
 * also see connected time, cumulative WebRTC and the most concurrent connections.
 */
export function UsagePanel() {
  const { t, i18n } = useTranslation();
  const { organization } = useSession();
  const usage = useDashboardUsage();
  useReportQueryError(usage.error);
  const language = i18n.language;
  const data = usage.data;
  // The period's end is exclusive: its last day is the day before.
  const lastDay = data ? new Date(new Date(data.billingPeriod.to).getTime() - 86_400_000).toISOString() : '';
  const duration = splitDuration(data?.liveConnectedSeconds ?? 0);
  const figures: Figure[] = data
    ? [
        { label: t('usage.requests'), value: formatCount(data.requests, language), testId: 'usage-requests' },
        {
          label: t('usage.outbound'),
          value: formatGiB(data.outboundBytes, language),
          unit: 'GiB',
          testId: 'usage-outbound',
        },
        ...(organization?.isLive
          ? [
              {
                label: t('usage.liveConnected'),
                value: t('usage.duration', duration),
                testId: 'usage-live-seconds',
              },
              {
                label: t('usage.webrtcCumulative'),
                value: formatCount(data.webrtcCumulative, language),
                testId: 'usage-webrtc',
              },
              {
                label: t('usage.maxConcurrent'),
                value: formatCount(data.maxConcurrentConnections, language),
                testId: 'usage-max-concurrent',
              },
            ]
          : []),
      ]
    : [];
  return (
    <Card className="shadow-sm border-0 mb-4" data-testid="usage-panel">
      <Card.Header className="bg-body d-flex flex-wrap justify-content-between align-items-baseline gap-2">
        <h2 className="h6 mb-0">{t('usage.monthlyUsage')}</h2>
        {data && (
          <span className="small" data-testid="usage-period">
            {t('usage.billingPeriod')}:{' '}
            <strong>
              {formatUtcDate(data.billingPeriod.from, language)} – {formatUtcDate(lastDay, language)} (UTC)
            </strong>
          </span>
        )}
      </Card.Header>
      <Card.Body>
        {usage.isPending && <LoadingBlock />}
        {data && (
          <>
            <UsageFigures figures={figures} columns={{ xs: 12, sm: 6, lg: true }} />
            <p className="small text-body-secondary mt-3 mb-0" data-testid="usage-utc-note">
              {t('usage.utcNote')}
            </p>
          </>
        )}
      </Card.Body>
    </Card>
  );
}
