import { zodResolver } from '@hookform/resolvers/zod';
import { useState } from 'react';
import Alert from 'react-bootstrap/Alert';
import Form from 'react-bootstrap/Form';
import { useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { Link, useSearchParams } from 'react-router';
import { loginPassword, operations, type MessageKey } from '@ukiyo/contract';
import { paths } from '@/app/paths.ts';
import { PasswordPairFields } from '@/components/password-pair-fields.tsx';
import { FormField } from '@/components/form-field.tsx';
import { ApiError } from '@/lib/api-client.ts';
import { useFormSubmit } from '@/lib/use-form-submit.ts';
import { useRequestPasswordReset, useResetPassword } from '@/features/auth/api/auth-api.ts';
import { confirmationMatches } from '@/lib/password-confirmation.ts';
import { LinkButton } from '@/components/link-button.tsx';
import { AuthFormEnd } from './auth-form-end.tsx';
import { AuthPanel } from './auth-panel.tsx';

const resetSchema = operations['user.reset_password'].input
  .omit({ token: true })
  .extend({ confirmation: loginPassword() })
  .refine(...confirmationMatches('newPassword'));

/** Refusals of a reset link explained on the form (console-spec section 8). */
const RESET_REFUSALS = ['emailAddress not match', 'not valid user'];

function RequestForm() {
  const { t } = useTranslation();
  const request = useRequestPasswordReset();
  const [sent, setSent] = useState(false);
  const form = useForm({
    resolver: zodResolver(operations['user.request_password_reset'].input),
    defaultValues: { emailAddress: '' },
  });
  const submit = useFormSubmit(form, {
    action: 'passwordReset',
    send: async (input) => {
      await request.mutateAsync(input);
      setSent(true);
    },
  });

  // The same answer whether or not the address is known: the page must not reveal accounts.
  if (sent) {
    return (
      <div data-testid="forget-sent">
        <Alert variant="success">{t('forget.sent')}</Alert>
        <p className="small text-body-secondary">{t('forget.sentHelp')}</p>
        <LinkButton to={paths.login()} variant="outline-primary" testId="forget-login">
          {t('login.back')}
        </LinkButton>
      </div>
    );
  }
  return (
    <Form noValidate onSubmit={submit} data-testid="forget-form">
      <p className="text-body-secondary small">{t('forget.lead')}</p>
      <FormField
        form={form}
        name="emailAddress"
        id="forget-email"
        label={t('login.emailAddress')}
        type="email"
        autoComplete="email"
        className="mb-4"
      />
      <AuthFormEnd busy={request.isPending} testId="forget-submit" label={t('forget.submit')}>
        <Link to={paths.login()}>{t('login.back')}</Link>
      </AuthFormEnd>
    </Form>
  );
}

function ResetForm({ token }: { token: string }) {
  const { t } = useTranslation();
  const reset = useResetPassword();
  const [done, setDone] = useState(false);
  const [refusal, setRefusal] = useState<{ code: string; key: MessageKey } | null>(null);
  const form = useForm({
    resolver: zodResolver(resetSchema),
    defaultValues: { emailAddress: '', newPassword: '', confirmation: '' },
  });
  const submit = useFormSubmit(form, {
    action: 'passwordReset',
    send: async ({ emailAddress, newPassword }) => {
      setRefusal(null);
      await reset.mutateAsync({ token, emailAddress, newPassword });
      setDone(true);
    },
    explain: (error) => {
      if (!(error instanceof ApiError && RESET_REFUSALS.includes(error.code))) return false;
      setRefusal({ code: error.code, key: error.messageKey });
      return true;
    },
  });

  if (done) {
    return (
      <div data-testid="reset-done">
        <Alert variant="success">{t('forget.resetDone')}</Alert>
        <LinkButton to={paths.login()} variant="primary" testId="reset-login">
          {t('forget.toLogin')}
        </LinkButton>
      </div>
    );
  }
  return (
    <Form noValidate onSubmit={submit} data-testid="reset-form">
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
      <FormField
        form={form}
        name="emailAddress"
        id="reset-email"
        label={t('login.emailAddress')}
        type="email"
        autoComplete="username"
      />
      <PasswordPairFields
        ids={{ password: 'reset-password', confirmation: 'reset-confirmation' }}
        labels={{ password: t('account.newPassword'), confirmation: t('account.newPasswordConfirmation') }}
        password={form.register('newPassword')}
        confirmation={form.register('confirmation')}
        errors={{
          password: form.formState.errors.newPassword,
          confirmation: form.formState.errors.confirmation,
        }}
        help={t('updatePassword.rules')}
        confirmationClassName="mb-4"
      />
      <AuthFormEnd busy={reset.isPending} testId="reset-submit" label={t('forget.resetSubmit')} />
    </Form>
  );
}

export function ForgetPage() {
  const { t } = useTranslation();
  const [search] = useSearchParams();
  const token = search.get('token');
  return (
    <AuthPanel title={token ? t('forget.resetTitle') : t('title.forget')}>
      {/* Keyed by token: a second mail's link opens a fresh form. */}
      {token ? <ResetForm key={token} token={token} /> : <RequestForm />}
    </AuthPanel>
  );
}
