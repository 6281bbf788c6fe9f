import Alert from 'react-bootstrap/Alert';
import Button from 'react-bootstrap/Button';
import { useTranslation } from 'react-i18next';
import { useRouteError } from 'react-router';

/**
 * A render or module-load failure (a page's chunk can vanish with a new deployment): say so and
 * offer a reload, which fetches the current build.
 */
export function RootError() {
  const { t } = useTranslation();
  const error = useRouteError();
  console.error(error);
  return (
    <div className="container py-5" style={{ maxWidth: '40rem' }}>
      <Alert variant="danger" data-testid="root-error">
        <Alert.Heading as="h1" className="h5">
          {t('error.internal')}
        </Alert.Heading>
        <p className="mb-3">{t('rootError.body')}</p>
        <Button variant="outline-danger" onClick={() => window.location.reload()}>
          {t('rootError.reload')}
        </Button>
      </Alert>
    </div>
  );
}
