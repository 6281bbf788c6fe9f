import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { paths } from '../../../app/routes.ts';
import { isLoggedIn, useSession } from '../../../lib/session.ts';

export function NotFoundPage() {
  const { t } = useTranslation();
  const { user } = useSession();
  return (
    <section className="centered-panel wide text-center py-5" data-testid="not-found">
      <p className="display-3 fw-light text-body-tertiary mb-2" aria-hidden="true">
        404
      </p>
      <h1 className="h3">{t('title.notFound')}</h1>
      <p className="text-body-secondary mb-4">{t('notFound.body')}</p>
      <Link className="btn btn-primary" to={isLoggedIn(user) ? paths.home() : paths.login()}>
        {t(isLoggedIn(user) ? 'notFound.home' : 'notFound.login')}
      </Link>
    </section>
  );
}
