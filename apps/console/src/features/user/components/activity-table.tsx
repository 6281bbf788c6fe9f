import Alert from 'react-bootstrap/Alert';
import Badge from 'react-bootstrap/Badge';
import { useTranslation } from 'react-i18next';
import type { OperationOutput, Operations } from '@ukiyo/contract';
import { LoadingBlock } from '@/components/loading-block.tsx';
import { StackingTable } from '@/components/stacking-table.tsx';
import { useReportQueryError } from '@/lib/api-errors.ts';
import { formatDateTime } from '@/lib/format.ts';
import { useAuditEntries } from '@/features/user/api/user-api.ts';

type Entry = OperationOutput<Operations['audit.list']>['entries'][number];

const KIND_STYLE: Record<Entry['kind'], string> = {
  login: 'success',
  logout: 'secondary',
  login_failed: 'danger',
};

/** The latest logins, logouts and failed logins of one's own account, newest first. */
export function ActivityTable({ limit }: { limit: number }) {
  const { t, i18n } = useTranslation();
  const query = useAuditEntries(limit);
  useReportQueryError(query.error);
  if (query.isPending) return <LoadingBlock />;
  const entries = query.data?.entries ?? [];
  if (entries.length === 0) {
    return (
      <Alert variant="secondary" className="mb-0" data-testid="activity-empty">
        {t('activity.empty')}
      </Alert>
    );
  }
  return (
    <StackingTable hover size="sm" className="mb-0 align-middle" data-testid="activity-table">
      <thead className="table-light">
        <tr>
          <th scope="col">{t('activity.time')}</th>
          <th scope="col">{t('activity.kind')}</th>
          <th scope="col">{t('activity.email')}</th>
          <th scope="col">{t('activity.ip')}</th>
        </tr>
      </thead>
      <tbody>
        {entries.map((entry, index) => (
          <tr key={`${entry.time}-${index}`} data-testid="activity-row" data-kind={entry.kind}>
            <td className="text-nowrap small">{formatDateTime(entry.time, i18n.language)}</td>
            <td>
              <Badge bg={KIND_STYLE[entry.kind]}>{t(`activity.kind.${entry.kind}`)}</Badge>
            </td>
            <td>{entry.email}</td>
            <td>
              <code>{entry.ip}</code>
            </td>
          </tr>
        ))}
      </tbody>
    </StackingTable>
  );
}
