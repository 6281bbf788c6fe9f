import type { ReactNode } from 'react';
import Alert from 'react-bootstrap/Alert';
import { useTranslation } from 'react-i18next';
import { paths } from '@/app/paths.ts';
import { PageHeader } from '@/components/page-header.tsx';
import { useSession } from '@/lib/session.ts';
import { LinkButton } from '@/components/link-button.tsx';

/**
 * The live pages' content only in a live organization. Administrators pass the route guard in
 * any organization (console-spec section 6), but channels and their statistics exist only in
 * live ones: in an image organization the page says so and offers the organization switch,
 * rendering no form and making no call that could only fail.
 */
export function LiveOrganizationOnly({ title, children }: { title: string; children: ReactNode }) {
  const { t } = useTranslation();
  const { organization } = useSession();
  if (organization?.isLive) return children;
  return (
    <>
      <PageHeader title={title} />
      <Alert variant="info" data-testid="live-image-organization">
        <p className="mb-2">{t('channel.imageOrganization', { name: organization?.name ?? '' })}</p>
        <LinkButton
          to={paths.changeOrganization()}
          variant="primary"
          size="sm"
          testId="live-change-organization"
        >
          {t('channel.changeOrganization')}
        </LinkButton>
      </Alert>
    </>
  );
}
