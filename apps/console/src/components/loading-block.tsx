import Spinner from 'react-bootstrap/Spinner';
import { useTranslation } from 'react-i18next';

/** A section waiting for its data. */
export function LoadingBlock() {
  const { t } = useTranslation();
  return (
    <div className="text-center py-4" data-testid="loading">
      <Spinner animation="border" variant="secondary" role="status">
        <span className="visually-hidden">{t('common.loading')}</span>
      </Spinner>
    </div>
  );
}
