import { zodResolver } from '@hookform/resolvers/zod';
import { useState } from 'react';
import Alert from 'react-bootstrap/Alert';
import Button from 'react-bootstrap/Button';
import Form from 'react-bootstrap/Form';
import { useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { Link, useNavigate } from 'react-router';
import { operations, PRODUCT_NAME, type ErrorCode, type MessageKey } from '@ukiyo/contract';
import { paths } from '@/app/paths.ts';
import { FormField } from '@/components/form-field.tsx';
import { ApiError } from '@/lib/api-client.ts';
import { useFormSubmit } from '@/lib/use-form-submit.ts';
import { useLogin, useVerifyTotp } from '@/features/auth/api/auth-api.ts';
import { AuthFormEnd } from './auth-form-end.tsx';
import { AuthPanel } from './auth-panel.tsx';

/** Refusals the login form explains in place instead of in the flash bar. */
const EXPLAINED_HERE: readonly ErrorCode[] = [
  'wrong email or password',
  'password too long',
  'too many attempts',
];

function LoginRefusal({ error }: { error: ApiError }) {
  const { t } = useTranslation();
  return (
    <Alert variant="danger" data-testid="login-error" className="small">
      {t(error.messageKey)}
      {error.code === 'password too long' && (
        <div className="mt-1">
          <Link to={paths.forget()} data-testid="login-forget-link">
            {t('login.forgetLink')}
          </Link>
        </div>
      )}
    </Alert>
  );
}

function refusalOf(error: unknown): ApiError | null {
  return error instanceof ApiError && (EXPLAINED_HERE as readonly string[]).includes(error.code)
    ? error
    : null;
}

function CredentialsStep({ onTotpRequired }: { onTotpRequired: () => void }) {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const login = useLogin();
  const [refusal, setRefusal] = useState<ApiError | null>(null);
  const form = useForm({
    resolver: zodResolver(operations['auth.login'].input),
    defaultValues: { emailAddress: '', password: '' },
  });
  const submit = useFormSubmit(form, {
    action: 'login',
    send: async (input) => {
      setRefusal(null);
      const result = await login.mutateAsync(input);
      if (result.totpRequired) onTotpRequired();
      else await navigate(paths.home());
    },
    explain: (error) => {
      const explained = refusalOf(error);
      setRefusal(explained);
      return explained !== null;
    },
  });

  return (
    <Form noValidate onSubmit={submit} data-testid="login-form">
      {refusal && <LoginRefusal error={refusal} />}
      <FormField
        form={form}
        name="emailAddress"
        id="login-email"
        label={t('login.emailAddress')}
        type="email"
        autoComplete="username"
        autoFocus
      />
      <FormField
        form={form}
        name="password"
        id="login-password"
        label={t('login.password')}
        type="password"
        autoComplete="current-password"
        className="mb-4"
      />
      <AuthFormEnd busy={login.isPending} testId="login-submit" label={t('login.submit')}>
        <Link to={paths.forget()}>{t('login.forgetLink')}</Link>
      </AuthFormEnd>
    </Form>
  );
}

function TotpStep({ onBack }: { onBack: () => void }) {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const verify = useVerifyTotp();
  const [refusal, setRefusal] = useState<MessageKey | null>(null);
  const form = useForm({
    resolver: zodResolver(operations['auth.verify_totp'].input),
    defaultValues: { code: '' },
  });
  const submit = useFormSubmit(form, {
    action: 'login',
    send: async (input) => {
      setRefusal(null);
      await verify.mutateAsync(input);
      await navigate(paths.home());
    },
    explain: (error) => {
      if (!(error instanceof ApiError)) return false;
      if (error.code === 'invalid verification code') {
        form.setError('code', { type: 'server', message: error.messageKey });
        return true;
      }
      if (error.code === 'too many attempts') {
        setRefusal(error.messageKey);
        return true;
      }
      return false;
    },
  });

  return (
    <Form noValidate onSubmit={submit} data-testid="totp-form">
      {refusal && (
        <Alert variant="danger" className="small" data-testid="login-error">
          {t(refusal)}
        </Alert>
      )}
      <p className="text-body-secondary small">{t('login.totpHelp')}</p>
      <FormField
        form={form}
        name="code"
        id="login-totp"
        label={t('login.totpCode')}
        inputMode="numeric"
        autoComplete="one-time-code"
        autoFocus
        className="mb-4"
      />
      <AuthFormEnd busy={verify.isPending} testId="totp-submit" label={t('login.totpSubmit')}>
        <Button variant="link" size="sm" onClick={onBack}>
          {t('login.back')}
        </Button>
      </AuthFormEnd>
    </Form>
  );
}

export function LoginPage() {
  const { t } = useTranslation();
  const [step, setStep] = useState<'credentials' | 'totp'>('credentials');
  return (
    <AuthPanel
      title={step === 'credentials' ? t('title.login') : t('login.totpTitle')}
      lead={t('login.lead', { product: PRODUCT_NAME })}
    >
      {step === 'credentials' ? (
        <CredentialsStep onTotpRequired={() => setStep('totp')} />
      ) : (
        <TotpStep onBack={() => setStep('credentials')} />
      )}
    </AuthPanel>
  );
}
