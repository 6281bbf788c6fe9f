import { zodResolver } from '@hookform/resolvers/zod';
import { useState } from 'react';
import Alert from 'react-bootstrap/Alert';
import Card from 'react-bootstrap/Card';
import Form from 'react-bootstrap/Form';
import { useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { Link, useSearchParams } from 'react-router';
import { loginPassword, operations, type MessageKey } from '@ukiyo/contract';
import { paths } from '../../../app/routes.ts';
import { PasswordPairFields } from '../../../components/password-pair-fields.tsx';
import { SubmitButton } from '../../../components/submit-button.tsx';
import { TextField } from '../../../components/text-field.tsx';
import { ApiError } from '../../../lib/api-client.ts';
import { useApiErrorHandler } from '../../../lib/api-errors.ts';
import { useRequestPasswordReset, useResetPassword } from '../api/auth-api.ts';
import { confirmationMatches } from '../../../lib/password-confirmation.ts';

const resetSchema = operations['user.reset_password'].input
  .omit({ token: true })
  .extend({ confirmation: loginPassword() })
  .refine(...confirmationMatches('newPassword'));

/** Refusals of a reset link explained on the form (console-spec section 8). */
const RESET_REFUSALS = ['emailAddress not match', 'not valid user'];

function RequestForm() {
  const { t } = useTranslation();
  const handleError = useApiErrorHandler();
  const request = useRequestPasswordReset();
  const [sent, setSent] = useState(false);
  const {
    register,
    handleSubmit,
    setError,
    formState: { errors },
  } = useForm({
    resolver: zodResolver(operations['user.request_password_reset'].input),
    defaultValues: { emailAddress: '' },
  });

  const submit = handleSubmit(async (input) => {
    try {
      await request.mutateAsync(input);
      setSent(true);
    } catch (error) {
      handleError(error, { setError, action: 'passwordReset' });
    }
  });

  // The same answer whether or not the address is known: the page must not reveal accounts.
  if (sent) {
    return (
      <div data-testid="forget-sent">
        <Alert variant="success">{t('forget.sent')}</Alert>
        <p className="small text-body-secondary">{t('forget.sentHelp')}</p>
        <Link to={paths.login()} className="btn btn-outline-primary" data-testid="forget-login">
          {t('login.back')}
        </Link>
      </div>
    );
  }
  return (
    <Form noValidate onSubmit={(event) => void submit(event)} data-testid="forget-form">
      <p className="text-body-secondary small">{t('forget.lead')}</p>
      <TextField
        id="forget-email"
        label={t('login.emailAddress')}
        type="email"
        autoComplete="email"
        registration={register('emailAddress')}
        error={errors.emailAddress}
        className="mb-4"
      />
      <SubmitButton busy={request.isPending} testId="forget-submit" className="w-100">
        {t('forget.submit')}
      </SubmitButton>
      <div className="text-center mt-3 small">
        <Link to={paths.login()}>{t('login.back')}</Link>
      </div>
    </Form>
  );
}

function ResetForm({ token }: { token: string }) {
  const { t } = useTranslation();
  const handleError = useApiErrorHandler();
  const reset = useResetPassword();
  const [done, setDone] = useState(false);
  const [refusal, setRefusal] = useState<{ code: string; key: MessageKey } | null>(null);
  const {
    register,
    handleSubmit,
    setError,
    formState: { errors },
  } = useForm({
    resolver: zodResolver(resetSchema),
    defaultValues: { emailAddress: '', newPassword: '', confirmation: '' },
  });

  const submit = handleSubmit(async ({ emailAddress, newPassword }) => {
    setRefusal(null);
    try {
      await reset.mutateAsync({ token, emailAddress, newPassword });
      setDone(true);
    } catch (error) {
      if (error instanceof ApiError && RESET_REFUSALS.includes(error.code)) {
        setRefusal({ code: error.code, key: error.messageKey });
      } else {
        handleError(error, { setError, action: 'passwordReset' });
      }
    }
  });

  if (done) {
    return (
      <div data-testid="reset-done">
        <Alert variant="success">{t('forget.resetDone')}</Alert>
        <Link to={paths.login()} className="btn btn-primary" data-testid="reset-login">
          {t('forget.toLogin')}
        </Link>
      </div>
    );
  }
  return (
    <Form noValidate onSubmit={(event) => void submit(event)} data-testid="reset-form">
      {refusal && (
        <Alert variant="danger" className="small" data-testid="reset-error" data-code={refusal.code}>
          {t(refusal.key)}
          {refusal.code === 'not valid user' && (
            <div className="mt-1">
              <Link to={paths.forget()} data-testid="reset-request-again">
                {t('forget.requestAgain')}
              </Link>
            </div>
          )}
        </Alert>
      )}
      <p className="text-body-secondary small">{t('forget.resetLead')}</p>
      <TextField
        id="reset-email"
        label={t('login.emailAddress')}
        type="email"
        autoComplete="username"
        registration={register('emailAddress')}
        error={errors.emailAddress}
      />
      <PasswordPairFields
        ids={{ password: 'reset-password', confirmation: 'reset-confirmation' }}
        labels={{ password: t('account.newPassword'), confirmation: t('account.newPasswordConfirmation') }}
        password={register('newPassword')}
        confirmation={register('confirmation')}
        errors={{ password: errors.newPassword, confirmation: errors.confirmation }}
        help={t('updatePassword.rules')}
        confirmationClassName="mb-4"
      />
      <SubmitButton busy={reset.isPending} testId="reset-submit" className="w-100">
        {t('forget.resetSubmit')}
      </SubmitButton>
    </Form>
  );
}

export function ForgetPage() {
  const { t } = useTranslation();
  const [search] = useSearchParams();
  const token = search.get('token');
  return (
    <div className="centered-panel">
      <Card className="shadow-sm border-0">
        <Card.Body className="p-4 p-sm-5">
          <h1 className="h4 mb-4">{token ? t('forget.resetTitle') : t('title.forget')}</h1>
          {/* Keyed by token: a second mail's link opens a fresh form. */}
          {token ? <ResetForm key={token} token={token} /> : <RequestForm />}
        </Card.Body>
      </Card>
    </div>
  );
}
