import Alert from 'react-bootstrap/Alert';
import { useTranslation } from 'react-i18next';
import { Link, useLocation } from 'react-router';
import { isAdministrator, OriginKind, type OperationOutput, type Operations } from '@ukiyo/contract';
import { paths } from '@/app/paths.ts';
import { DataTableCard } from '@/components/data-table-card.tsx';
import { PageHeader } from '@/components/page-header.tsx';
import { LinkButton } from '@/components/link-button.tsx';
import { useReportQueryError } from '@/lib/api-errors.ts';
import { formatUtcDate } from '@/lib/format.ts';
import { usePlanFeatures } from '@/lib/plan-features.ts';
import { useSession } from '@/lib/session.ts';
import { formatCount, formatGiB } from '@/lib/usage-format.ts';
import { useOrigins } from '@/features/origin/api/origin-api.ts';
import { hasCustomDomain, sourceAddress, tlsState } from '@/features/origin/origin-display.ts';
import { OriginCheck } from './origin-check.tsx';
import { OriginStatusBadge } from './origin-status.tsx';
import { TlsBadge } from './tls-badge.tsx';
import type { OriginCheckState } from './use-origin-save.ts';

type ListedOrigin = OperationOutput<Operations['origin.list']>['origins'][number];

function TlsCell({ origin }: { origin: ListedOrigin }) {
  const { t, i18n } = useTranslation();
  if (!hasCustomDomain(origin)) return <span className="text-body-secondary">—</span>;
  const state = tlsState(origin.tlsCertificate);
  return (
    <>
      <TlsBadge state={state} />
      {origin.tlsCertificate && (
        <div className="small text-body-secondary text-nowrap">
          {t('origin.tls.until', { date: formatUtcDate(origin.tlsCertificate.expiresAt, i18n.language) })}
        </div>
      )}
    </>
  );
}

export function OriginIndexPage() {
  const { t, i18n } = useTranslation();
  const { user } = useSession();
  const origins = useOrigins();
  const plan = usePlanFeatures();
  const location = useLocation();
  useReportQueryError(origins.error);

  const list = origins.data?.origins ?? [];
  const checkID = (location.state as Partial<OriginCheckState> | null)?.checkOriginID;
  const checked = list.find((origin) => origin.originID === checkID);
  const limit = plan.data?.features.originLimit;
  const limitReached =
    !isAdministrator(user?.permission ?? 0) &&
    limit !== undefined &&
    origins.isSuccess &&
    list.length >= limit;

  return (
    <>
      <PageHeader
        title={t('title.originIndex')}
        lead={t('origin.lead')}
        actions={
          !limitReached && (
            <LinkButton to={paths.originCreate()} variant="primary" testId="origin-create">
              {t('origin.create')}
            </LinkButton>
          )
        }
      />
      {limitReached && (
        <Alert variant="info" data-testid="origin-limit">
          {t('error.tooManyOrigins')}{' '}
          <Link to={paths.plan()} className="alert-link">
            {t('origin.limitPlanLink')}
          </Link>
        </Alert>
      )}
      {checked && <OriginCheck key={location.key} originID={checked.originID} name={checked.name} auto />}
      <DataTableCard
        query={origins}
        rowCount={list.length}
        testId="origin-table"
        empty={t('origin.empty')}
        emptyTestId="origin-empty"
        columns={[
          t('origin.name'),
          t('origin.source'),
          t('origin.kind'),
          t('origin.statusLabel'),
          t('origin.customDomain'),
          t('origin.tlsLabel'),
          { label: t('origin.monthRequests'), className: 'text-end' },
          { label: t('origin.monthTraffic'), className: 'text-end' },
        ]}
        actions
      >
        {list.map((origin) => (
          <tr key={origin.originID} data-testid="origin-row" data-origin-id={origin.originID}>
            <td>
              <code data-testid="origin-name">{origin.name}</code>
              {origin.description && <div className="small text-body-secondary">{origin.description}</div>}
            </td>
            <td className="small" data-testid="origin-source">
              {sourceAddress(origin)}
            </td>
            <td className="text-nowrap">
              {t(origin.kind === OriginKind.s3 ? 'origin.kindS3' : 'origin.kindHttp')}
            </td>
            <td>
              <OriginStatusBadge origin={origin} />
            </td>
            <td className="small">
              {hasCustomDomain(origin) ? origin.originName : <span className="text-body-secondary">—</span>}
            </td>
            <td>
              <TlsCell origin={origin} />
            </td>
            <td className="text-end text-nowrap" data-testid="origin-requests">
              {formatCount(origin.usage.requests, i18n.language)}
            </td>
            <td className="text-end text-nowrap">
              {t('origin.gib', { value: formatGiB(origin.usage.outboundBytes, i18n.language) })}
            </td>
            <td className="text-end text-nowrap">
              <div className="d-inline-flex flex-wrap flex-md-nowrap justify-content-end gap-1">
                <LinkButton
                  to={paths.originUpdate(origin.originID)}
                  variant="outline-primary"
                  size="sm"
                  testId="origin-update"
                >
                  {t('common.edit')}
                </LinkButton>
                {!limitReached && (
                  <LinkButton
                    to={paths.originCopy(origin.originID)}
                    variant="outline-secondary"
                    size="sm"
                    testId="origin-copy"
                  >
                    {t('origin.copy')}
                  </LinkButton>
                )}
                {hasCustomDomain(origin) && (
                  <LinkButton
                    to={paths.originCert(origin.originID)}
                    variant="outline-secondary"
                    size="sm"
                    testId="origin-cert"
                  >
                    {t('origin.certificate')}
                  </LinkButton>
                )}
                <LinkButton
                  to={paths.originDestroy(origin.originID)}
                  variant="outline-danger"
                  size="sm"
                  testId="origin-destroy"
                >
                  {t('common.delete')}
                </LinkButton>
              </div>
            </td>
          </tr>
        ))}
      </DataTableCard>
    </>
  );
}
