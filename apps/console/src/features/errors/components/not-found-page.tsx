import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { paths } from '@/app/paths.ts';
import { useFlashMessages } from '@/lib/flash.ts';
import { isLoggedIn, useSession } from '@/lib/session.ts';

export function NotFoundPage() {
  const { t } = useTranslation();
  const { user } = useSession();
  // A route refused for want of a permission lands here with its reason in the flash bar
  // (console-spec section 6): that is the page's one message, so the page does not also claim
  // that the page does not exist.
  const refused = useFlashMessages().some((message) => message.key === 'limit.notEnoughPermission');
  return (
    <section className="centered-panel wide text-center py-5" data-testid="not-found" data-refused={refused}>
      {!refused && (
        <>
          <p className="display-3 fw-light text-body-tertiary mb-2" aria-hidden="true">
            404
          </p>
          <h1 className="h3">{t('title.notFound')}</h1>
          <p className="text-body-secondary mb-4">{t('notFound.body')}</p>
        </>
      )}
      <Link className="btn btn-primary" to={isLoggedIn(user) ? paths.home() : paths.login()}>
        {t(isLoggedIn(user) ? 'notFound.home' : 'notFound.login')}
      </Link>
    </section>
  );
}
