import Card from 'react-bootstrap/Card';
import { useTranslation } from 'react-i18next';
import { DataTableCard } from '@/components/data-table-card.tsx';
import { PageHeader } from '@/components/page-header.tsx';
import { useReportQueryError } from '@/lib/api-errors.ts';
import { formatCount, formatGiB, monthPeriod, splitDuration } from '@/lib/usage-format.ts';
import { MonthPicker, useSelectedMonth } from '@/features/usage/components/month-picker.tsx';
import { useChannelStatistics } from '@/features/channel/api/channel-api.ts';
import { LiveOrganizationOnly } from './live-organization-only.tsx';

/**
 * /livestreaming: WebRTC connections (publishers and viewers) per channel for a UTC month, the
 * publisher's own time and the most HLS viewers at once (channel.statistics); HLS delivery is
 * on /statistics.
 */
export function LiveStreamingPage() {
  const { t } = useTranslation();
  return (
    <LiveOrganizationOnly title={t('title.liveStreaming')}>
      <LiveStatistics />
    </LiveOrganizationOnly>
  );
}

function LiveStatistics() {
  const { t, i18n } = useTranslation();
  const [selected, select] = useSelectedMonth();
  const statistics = useChannelStatistics(monthPeriod(selected.year, selected.month));
  useReportQueryError(statistics.error);
  const rows = statistics.data?.channels ?? [];
  const total = statistics.data?.total;
  const cells = (usage: NonNullable<typeof total>) => (
    <>
      <td className="text-end">{formatCount(usage.connections, i18n.language)}</td>
      <td className="text-end text-nowrap">{t('usage.duration', splitDuration(usage.connectedSeconds))}</td>
      <td className="text-end">{formatCount(usage.maxConcurrent, i18n.language)}</td>
      <td className="text-end text-nowrap" data-testid="live-statistics-publishing">
        {t('usage.duration', splitDuration(usage.publishingSeconds))}
      </td>
      <td className="text-end" data-testid="live-statistics-hls-viewers">
        {formatCount(usage.hlsMaxViewers, i18n.language)}
      </td>
      <td className="text-end text-nowrap">{formatGiB(usage.bytesIn, i18n.language)}</td>
    </>
  );
  return (
    <>
      <PageHeader
        title={t('title.liveStreaming')}
        lead={t('channel.statisticsLead')}
        actions={<MonthPicker value={selected} onChange={select} testId="live-month" />}
      />
      <DataTableCard
        query={statistics}
        rowCount={rows.length}
        testId="live-statistics"
        empty={t('channel.statisticsEmpty')}
        header={<Card.Header className="bg-body small text-body-secondary">{t('usage.utcNote')}</Card.Header>}
        columns={[
          t('channel.id'),
          { label: t('channel.webrtcConnections'), className: 'text-end' },
          { label: t('usage.liveConnected'), className: 'text-end' },
          { label: t('usage.maxConcurrent'), className: 'text-end' },
          { label: t('channel.publishingTime'), className: 'text-end' },
          { label: t('channel.hlsMaxViewers'), className: 'text-end' },
          { label: t('channel.bytesInGiB'), className: 'text-end' },
        ]}
      >
        {rows.map((row) => (
          <tr key={row.channelId} data-testid="live-statistics-row">
            <td>
              <code>{row.channelId}</code>
            </td>
            {cells(row)}
          </tr>
        ))}
        {total && (
          <tr className="fw-semibold table-light">
            <td>{t('usage.total')}</td>
            {cells(total)}
          </tr>
        )}
      </DataTableCard>
    </>
  );
}
