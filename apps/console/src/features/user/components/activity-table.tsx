import Alert from 'react-bootstrap/Alert';
import Badge from 'react-bootstrap/Badge';
import { useTranslation } from 'react-i18next';
import type { OperationOutput, Operations } from '@ukiyo/contract';
import { LoadingBlock } from '@/components/loading-block.tsx';
import { StackingTable } from '@/components/stacking-table.tsx';
import { useReportQueryError } from '@/lib/api-errors.ts';
import { formatDateTime } from '@/lib/format.ts';
import { useAuditEntries } from '@/features/user/api/user-api.ts';

export type AuditEntry = OperationOutput<Operations['audit.list']>['entries'][number];

const SESSION_STYLE: Partial<Record<AuditEntry['kind'], string>> = {
  login: 'success',
  logout: 'secondary',
  login_failed: 'danger',
};

/** A field's value as one short line (objects as JSON). */
export function fieldValue(value: unknown): string {
  if (value === null || value === undefined) return '—';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** Each changed field of an entry with its value before and after (either may be absent). */
export function changedFieldsOf(entry: AuditEntry): { field: string; before: unknown; after: unknown }[] {
  const fields = new Set([...Object.keys(entry.before ?? {}), ...Object.keys(entry.after ?? {})]);
  return [...fields].map((field) => ({ field, before: entry.before?.[field], after: entry.after?.[field] }));
}

/** Who acted: the person, and the API token when the change came with one. */
function Actor({ entry }: { entry: AuditEntry }) {
  const { t } = useTranslation();
  return (
    <>
      {entry.email}
      {entry.token && (
        <Badge bg="info" text="dark" className="ms-1 text-wrap" data-testid="activity-token">
          {t('activity.viaToken', { name: entry.token.name || `#${entry.token.id}` })}
        </Badge>
      )}
    </>
  );
}

function Changes({ entry }: { entry: AuditEntry }) {
  const { t } = useTranslation();
  const fields = changedFieldsOf(entry);
  if (fields.length === 0) return null;
  return (
    <details data-testid="activity-changes">
      <summary className="small">{t('activity.changedFields', { count: fields.length })}</summary>
      <dl className="small mb-0 mt-1">
        {fields.map(({ field, before, after }) => (
          <div key={field} className="mb-1">
            <dt className="fw-semibold">{field}</dt>
            <dd className="mb-0">
              {entry.before && <del className="text-body-secondary me-1">{fieldValue(before)}</del>}
              {entry.before && entry.after && <span aria-hidden="true">→ </span>}
              {entry.after && <ins className="text-decoration-none">{fieldValue(after)}</ins>}
            </dd>
          </div>
        ))}
      </dl>
    </details>
  );
}

/**
 * Audit entries, newest first: sign-ins and sign-outs, and configuration changes with who made
 * them (a person or an API token), from where, and what changed (secrets arrive masked).
 */
export function AuditTable({ entries }: { entries: readonly AuditEntry[] }) {
  const { t, i18n } = useTranslation();
  return (
    <StackingTable hover size="sm" className="mb-0 align-middle" data-testid="activity-table">
      <thead className="table-light">
        <tr>
          <th scope="col">{t('activity.time')}</th>
          <th scope="col">{t('activity.kind')}</th>
          <th scope="col">{t('activity.actor')}</th>
          <th scope="col">{t('activity.subject')}</th>
          <th scope="col">{t('activity.ip')}</th>
          <th scope="col">{t('activity.changes')}</th>
        </tr>
      </thead>
      <tbody>
        {entries.map((entry) => (
          <tr
            key={entry.auditEntryID}
            data-testid="activity-row"
            data-kind={entry.kind}
            data-operation={entry.operation ?? ''}
          >
            <td className="text-nowrap small">{formatDateTime(entry.time, i18n.language)}</td>
            <td>
              <Badge bg={SESSION_STYLE[entry.kind] ?? 'primary'} className="text-wrap">
                {entry.operation
                  ? t(`activity.operation.${entry.operation}`)
                  : t(`activity.kind.${entry.kind}`)}
              </Badge>
            </td>
            <td>
              <Actor entry={entry} />
            </td>
            <td>{entry.subject && <code>{entry.subject}</code>}</td>
            <td>
              <code>{entry.ip}</code>
            </td>
            <td>
              <Changes entry={entry} />
            </td>
          </tr>
        ))}
      </tbody>
    </StackingTable>
  );
}

/** The latest entries of one's own account (the account settings page's section). */
export function ActivityTable({ limit }: { limit: number }) {
  const { t } = useTranslation();
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
  return <AuditTable entries={entries} />;
}
