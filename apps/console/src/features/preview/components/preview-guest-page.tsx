import { useQuery } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { paths } from '@/app/paths.ts';
import { LoadingBlock } from '@/components/loading-block.tsx';
import { PageHeader } from '@/components/page-header.tsx';
import { callApi } from '@/lib/api-client.ts';
import { useReportQueryError } from '@/lib/api-errors.ts';
import { PreviewTester } from './preview-tester.tsx';

/** /preview-guest: no login; the sample images shipped with the product, on their own origin. */
export function PreviewGuestPage() {
  const { t } = useTranslation();
  const guest = useQuery({
    queryKey: ['preview.guest_origin'],
    queryFn: ({ signal }) => callApi('preview.guest_origin', {}, { signal }),
  });
  useReportQueryError(guest.error);
  const origin = guest.data;
  return (
    <>
      <PageHeader
        title={t('title.previewGuest')}
        lead={
          <>
            {t('preview.guestLead')}{' '}
            <Link to={paths.docs('image/conversion-parameters')}>{t('preview.parametersLink')}</Link>
          </>
        }
      />
      {!origin ? (
        guest.isPending && <LoadingBlock />
      ) : (
        <PreviewTester
          origins={[{ key: origin.name, label: origin.name }]}
          samplePaths={origin.samplePaths}
          initialPath={origin.samplePaths[0] ?? ''}
          resolveUrls={async (_key, requested) => requested.map((path) => origin.edgeUrl + path)}
        />
      )}
    </>
  );
}
