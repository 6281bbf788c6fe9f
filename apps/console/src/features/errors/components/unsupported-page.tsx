import Card from 'react-bootstrap/Card';
import { useTranslation } from 'react-i18next';
import { PageHeader } from '@/components/page-header.tsx';

/** The in-app twin of /unsupported.html, for links that land here inside the console. */
export function UnsupportedPage() {
  const { t } = useTranslation();
  return (
    <div className="centered-panel wide">
      <PageHeader title={t('title.unsupported')} />
      <Card className="shadow-sm border-0">
        <Card.Body>
          <p>{t('unsupported.body')}</p>
          <p className="mb-0 text-body-secondary small">{t('unsupported.browsers')}</p>
        </Card.Body>
      </Card>
    </div>
  );
}
