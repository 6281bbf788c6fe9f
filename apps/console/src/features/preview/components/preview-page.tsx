import Alert from 'react-bootstrap/Alert';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { hasPermission, Permission } from '@ukiyo/contract';
import { paths } from '@/app/paths.ts';
import { LoadingBlock } from '@/components/loading-block.tsx';
import { PageHeader } from '@/components/page-header.tsx';
import { LinkButton } from '@/components/link-button.tsx';
import { callApi } from '@/lib/api-client.ts';
import { useApiErrorHandler, useReportQueryError } from '@/lib/api-errors.ts';
import { useSession } from '@/lib/session.ts';
import { useOriginChoices } from '@/features/origin/api/origin-api.ts';
import { PreviewTester } from './preview-tester.tsx';

/** /preview: the organization's own origins; URLs come from the server, signed where the origin signs. */
export function PreviewPage() {
  const { t } = useTranslation();
  const { user } = useSession();
  const handleError = useApiErrorHandler();
  const origins = useOriginChoices();
  useReportQueryError(origins.error);
  const permission = user?.permission ?? 0;

  const resolveUrls = async (originKey: string, requested: string[]) => {
    try {
      return (await callApi('preview.urls', { originID: Number(originKey), paths: requested })).urls;
    } catch (error) {
      handleError(error, { action: 'preview' });
      return undefined;
    }
  };

  const list = origins.data?.origins ?? [];
  return (
    <>
      <PageHeader title={t('title.preview')} lead={t('preview.lead')} />
      {origins.isPending && <LoadingBlock />}
      {origins.isSuccess && list.length === 0 && (
        <Alert variant="secondary" data-testid="preview-no-origin">
          {t('preview.noOrigin')}{' '}
          {hasPermission(permission, Permission.origin) && (
            <Link to={paths.originCreate()} className="alert-link">
              {t('origin.create')}
            </Link>
          )}
        </Alert>
      )}
      {list.length > 0 && (
        <PreviewTester
          origins={list.map((origin) => ({
            key: String(origin.originID),
            label: origin.enableSignedUrl ? t('preview.signedOrigin', { name: origin.name }) : origin.name,
          }))}
          initialPath=""
          resolveUrls={resolveUrls}
          actions={(url, originKey) =>
            hasPermission(permission, Permission.cache) && (
              <LinkButton
                to={`${paths.cache()}?${new URLSearchParams({ origin: originKey, url })}`}
                variant="outline-secondary"
                size="sm"
                testId="preview-cache-link"
              >
                {t('preview.toCache')}
              </LinkButton>
            )
          }
        />
      )}
    </>
  );
}
