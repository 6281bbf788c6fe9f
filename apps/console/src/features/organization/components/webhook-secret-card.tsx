import { useState } from 'react';
import Alert from 'react-bootstrap/Alert';
import Button from 'react-bootstrap/Button';
import Card from 'react-bootstrap/Card';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { paths } from '@/app/paths.ts';
import { ConfirmModal } from '@/components/confirm-modal.tsx';
import { useApiErrorHandler, useReportQueryError } from '@/lib/api-errors.ts';
import { formatDateTime } from '@/lib/format.ts';
import { useRotateWebhookSecret, useWebhookSecret } from '@/features/organization/api/organization-api.ts';
import { SecretValue } from '@/components/secret-value.tsx';

/**
 * The live organization's webhook signing secret (Standard Webhooks): when it was made, and a
 * rotation whose answer is the only time the secret is shown. Rotating an existing secret is
 * confirmed first, since receivers still verifying with the old one start refusing at once.
 */
export function WebhookSecretCard() {
  const { t, i18n } = useTranslation();
  const status = useWebhookSecret();
  const rotate = useRotateWebhookSecret();
  const handleError = useApiErrorHandler();
  const [confirming, setConfirming] = useState(false);
  const [shown, setShown] = useState<string | undefined>(undefined);
  useReportQueryError(status.error);

  const createdAt = status.data?.createdAt ?? null;
  const run = async () => {
    setConfirming(false);
    try {
      setShown((await rotate.mutateAsync()).secret);
    } catch (error) {
      handleError(error, { action: 'webhookSecret' });
    }
  };

  return (
    <Card className="shadow-sm border-0 mt-4" data-testid="webhook-secret">
      <Card.Body className="p-4">
        <h2 className="h5">{t('webhookSecret.title')}</h2>
        <p className="small text-body-secondary">
          {t('webhookSecret.lead')}{' '}
          <Link to={paths.docs('live/webhooks')} data-testid="webhook-secret-docs">
            {t('webhookSecret.docs')}
          </Link>
        </p>
        {status.isSuccess && (
          <p className="small mb-3" data-testid="webhook-secret-status">
            {createdAt
              ? t('webhookSecret.createdAt', { date: formatDateTime(createdAt, i18n.language) })
              : t('webhookSecret.none')}
          </p>
        )}
        {shown && (
          <div data-testid="webhook-secret-shown">
            <Alert variant="warning" className="small">
              {t('webhookSecret.onceWarning')}
            </Alert>
            <SecretValue value={shown} testId="webhook-secret-value" className="mb-3" />
          </div>
        )}
        <Button
          variant={createdAt ? 'outline-danger' : 'primary'}
          disabled={!status.isSuccess || rotate.isPending}
          onClick={() => (createdAt ? setConfirming(true) : void run())}
          data-testid="webhook-secret-rotate"
        >
          {t(createdAt ? 'webhookSecret.rotate' : 'webhookSecret.create')}
        </Button>
      </Card.Body>
      <ConfirmModal
        show={confirming}
        title={t('webhookSecret.confirmTitle')}
        confirmLabel={t('webhookSecret.rotate')}
        busy={rotate.isPending}
        testId="webhook-secret-confirm"
        onConfirm={() => void run()}
        onCancel={() => setConfirming(false)}
      >
        {t('webhookSecret.confirmBody')}
      </ConfirmModal>
    </Card>
  );
}
