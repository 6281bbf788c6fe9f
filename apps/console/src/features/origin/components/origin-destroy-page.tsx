import Alert from 'react-bootstrap/Alert';
import Button from 'react-bootstrap/Button';
import Card from 'react-bootstrap/Card';
import Spinner from 'react-bootstrap/Spinner';
import { useTranslation } from 'react-i18next';
import { useNavigate } from 'react-router';
import type { Origin } from '@ukiyo/contract';
import { paths } from '@/app/paths.ts';
import { PageHeader } from '@/components/page-header.tsx';
import { LinkButton } from '@/components/link-button.tsx';
import { classifyApiError, useApiErrorHandler } from '@/lib/api-errors.ts';
import { flash } from '@/lib/flash.ts';
import { useDeleteOrigin } from '@/features/origin/api/origin-api.ts';
import { hasCustomDomain, sourceAddress } from '@/features/origin/origin-display.ts';
import { OriginLoader, useOriginParam } from './origin-loader.tsx';

function DestroyConfirmation({ origin }: { origin: Origin }) {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const handleError = useApiErrorHandler();
  const remove = useDeleteOrigin();
  const destroy = async () => {
    try {
      await remove.mutateAsync({ originID: origin.originID });
      flash.next({ variant: 'success', key: 'origin.deleted', action: 'origin' });
      await navigate(paths.originIndex());
    } catch (error) {
      if (classifyApiError(error).kind === 'internal')
        flash.now({ variant: 'danger', key: 'origin.deleteFailed', action: 'origin' });
      else handleError(error, { action: 'origin' });
    }
  };
  return (
    <Card className="shadow-sm border-0 form-card">
      <Card.Body className="p-4">
        <Alert variant="danger">{t('origin.destroyWarning')}</Alert>
        <dl className="row small">
          <dt className="col-sm-4">{t('origin.name')}</dt>
          <dd className="col-sm-8">
            <code data-testid="origin-destroy-name">{origin.name}</code>
          </dd>
          <dt className="col-sm-4">{t('origin.source')}</dt>
          <dd className="col-sm-8 text-break">{sourceAddress(origin)}</dd>
          {hasCustomDomain(origin) && (
            <>
              <dt className="col-sm-4">{t('origin.customDomain')}</dt>
              <dd className="col-sm-8">{origin.originName}</dd>
            </>
          )}
          {origin.description && (
            <>
              <dt className="col-sm-4">{t('origin.description')}</dt>
              <dd className="col-sm-8">{origin.description}</dd>
            </>
          )}
        </dl>
        <div className="d-flex gap-2">
          <Button
            variant="danger"
            disabled={remove.isPending}
            onClick={() => void destroy()}
            data-testid="origin-destroy-confirm"
          >
            {remove.isPending && <Spinner size="sm" className="me-2" aria-hidden="true" />}
            {t('origin.destroySubmit')}
          </Button>
          <LinkButton to={paths.originIndex()} variant="outline-secondary" testId="origin-destroy-cancel">
            {t('common.cancel')}
          </LinkButton>
        </div>
      </Card.Body>
    </Card>
  );
}

export function OriginDestroyPage() {
  const { t } = useTranslation();
  const originID = useOriginParam();
  return (
    <>
      <PageHeader title={t('title.originDestroy')} />
      <OriginLoader originID={originID}>{(origin) => <DestroyConfirmation origin={origin} />}</OriginLoader>
    </>
  );
}
