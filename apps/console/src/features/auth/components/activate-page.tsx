import Alert from 'react-bootstrap/Alert';
import { useTranslation } from 'react-i18next';
import { useParams } from 'react-router';
import { errorMessageKey } from '@ukiyo/contract';
import { paths } from '@/app/paths.ts';
import { LoadingBlock } from '@/components/loading-block.tsx';
import { ApiError } from '@/lib/api-client.ts';
import { isLoggedIn, useSession } from '@/lib/session.ts';
import { useActivation } from '@/features/auth/api/auth-api.ts';
import { LinkButton } from '@/components/link-button.tsx';
import { AuthPanel } from './auth-panel.tsx';

/** Refusals of an activation link the page explains (console-spec section 8); others are internal. */
const EXPLAINED = ['sql: no rows in result set', 'already activated', 'token is expired'];

/** The refusal the page explains: a link too long to be a token is as unknown as a mistyped one. */
function explainedCode(error: unknown): string | null {
  if (!(error instanceof ApiError)) return null;
  if (error.code === 'validation error') return 'sql: no rows in result set';
  return EXPLAINED.includes(error.code) ? error.code : null;
}

export function ActivatePage() {
  const { t } = useTranslation();
  const { token = '' } = useParams();
  const { user } = useSession();
  const activation = useActivation(token);
  const code = explainedCode(activation.error);
  // Someone already logged in (say, an administrator checking the link) goes on to the console.
  const next = isLoggedIn(user) ? paths.home() : paths.login();

  return (
    <AuthPanel title={t('title.activate')} wide>
      {activation.isPending && <LoadingBlock />}
      {activation.isSuccess && (
        <div data-testid="activate-success">
          <Alert variant="success">{t('activate.success')}</Alert>
          <p>
            {t('activate.account')}{' '}
            <strong data-testid="activate-email">{activation.data.emailAddress}</strong>
          </p>
          <p className="small text-body-secondary">{t('activate.next')}</p>
          <LinkButton to={next} variant="primary" testId="activate-login">
            {t('activate.login')}
          </LinkButton>
        </div>
      )}
      {activation.isError && (
        <div data-testid="activate-error" data-code={code ?? 'internal error'}>
          <Alert variant={code === 'already activated' ? 'info' : 'danger'}>
            {t(code ? errorMessageKey(code) : 'error.internal')}
          </Alert>
          <p className="small text-body-secondary">
            {t(code === 'already activated' ? 'activate.alreadyHelp' : 'activate.failedHelp')}
          </p>
          <div className="d-flex gap-2">
            <LinkButton to={next} variant="primary" testId="activate-login">
              {t('activate.login')}
            </LinkButton>
            {code !== 'already activated' && (
              <LinkButton to={paths.forget()} variant="outline-secondary" testId="activate-forget">
                {t('login.forgetLink')}
              </LinkButton>
            )}
          </div>
        </div>
      )}
    </AuthPanel>
  );
}
