import { zodResolver } from '@hookform/resolvers/zod';
import { useState } from 'react';
import Alert from 'react-bootstrap/Alert';
import Button from 'react-bootstrap/Button';
import Col from 'react-bootstrap/Col';
import Form from 'react-bootstrap/Form';
import Row from 'react-bootstrap/Row';
import { useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { useRevalidator } from 'react-router';
import { operations, type OperationOutput, type Operations, type User } from '@ukiyo/contract';
import { CopyButton } from '@/components/copy-button.tsx';
import { SubmitButton } from '@/components/submit-button.tsx';
import { FormField } from '@/components/form-field.tsx';
import { useApiErrorHandler } from '@/lib/api-errors.ts';
import { flash } from '@/lib/flash.ts';
import { refusalOnField, useFormSubmit } from '@/lib/use-form-submit.ts';
import {
  useRegenerateBackupCodes,
  useTotpBegin,
  useTotpDisable,
  useTotpEnable,
} from '@/features/user/api/user-api.ts';
import { SectionCard } from './section-card.tsx';
import { SecretValue } from '@/components/secret-value.tsx';
import { EnabledBadge } from '@/components/enabled-badge.tsx';

type Enrolment = OperationOutput<Operations['user.totp_begin']>;

/**
 * What the section shows: the status with its actions, an enrolment in progress, backup codes
 * just issued (shown once), or the password prompt before disabling or regenerating.
 */
type Mode =
  | { kind: 'status' }
  | { kind: 'enrolling'; enrolment: Enrolment }
  | { kind: 'codes'; codes: string[] }
  | { kind: 'password'; purpose: 'disable' | 'regenerate' };

function BackupCodes({ codes, onDone }: { codes: string[]; onDone: () => void }) {
  const { t } = useTranslation();
  return (
    <div data-testid="backup-codes">
      <Alert variant="warning" className="small">
        {t('twoStep.backupCodesOnce')}
      </Alert>
      <ol className="backup-code-list list-unstyled mb-3">
        {codes.map((code) => (
          <li key={code} data-testid="backup-code">
            <code>{code}</code>
          </li>
        ))}
      </ol>
      <div className="d-flex gap-2">
        <CopyButton text={codes.join('\n')} testId="backup-codes-copy" label={t('twoStep.copyCodes')} />
        <Button size="sm" onClick={onDone} data-testid="backup-codes-done">
          {t('twoStep.codesSaved')}
        </Button>
      </div>
    </div>
  );
}

function EnrolForm({
  enrolment,
  onEnabled,
  onCancel,
}: {
  enrolment: Enrolment;
  onEnabled: (codes: string[]) => void;
  onCancel: () => void;
}) {
  const { t } = useTranslation();
  const enable = useTotpEnable();
  const form = useForm({
    resolver: zodResolver(operations['user.totp_enable'].input),
    defaultValues: { code: '' },
  });
  const submit = useFormSubmit(form, {
    action: 'twoStep',
    send: async ({ code }) => onEnabled((await enable.mutateAsync(code)).backupCodes),
    explain: refusalOnField(form.setError, 'code', ['invalid verification code']),
  });

  return (
    <Row className="g-4" data-testid="totp-enrolment">
      <Col md="auto" className="text-center">
        <img
          src={enrolment.qrCodeDataUrl}
          alt={t('twoStep.qrAlt')}
          width={220}
          height={220}
          className="border rounded bg-white"
          data-testid="totp-qr"
        />
      </Col>
      <Col>
        <ol className="small ps-3">
          <li>{t('twoStep.step1')}</li>
          <li>{t('twoStep.step2')}</li>
          <li>{t('twoStep.step3')}</li>
        </ol>
        <div className="mb-3">
          <div className="small text-body-secondary mb-1">{t('twoStep.secret')}</div>
          <SecretValue value={enrolment.secret} testId="totp-secret" />
        </div>
        <Form noValidate onSubmit={submit} data-testid="totp-enable-form">
          <FormField
            form={form}
            name="code"
            id="totp-code"
            label={t('twoStep.code')}
            autoComplete="one-time-code"
            className="mb-3 totp-code-field"
          />
          <div className="d-flex gap-2">
            <SubmitButton busy={enable.isPending} testId="totp-enable-submit">
              {t('twoStep.enableSubmit')}
            </SubmitButton>
            <Button variant="outline-secondary" onClick={onCancel} data-testid="totp-cancel">
              {t('common.cancel')}
            </Button>
          </div>
        </Form>
      </Col>
    </Row>
  );
}

function PasswordPrompt({
  purpose,
  onDone,
  onCancel,
}: {
  purpose: 'disable' | 'regenerate';
  onDone: (codes: string[] | null) => void;
  onCancel: () => void;
}) {
  const { t } = useTranslation();
  const disable = useTotpDisable();
  const regenerate = useRegenerateBackupCodes();
  const prefix = purpose === 'disable' ? 'totp-disable' : 'backup-regenerate';
  const form = useForm({
    resolver: zodResolver(operations['user.totp_disable'].input),
    defaultValues: { password: '' },
  });
  const submit = useFormSubmit(form, {
    action: 'twoStep',
    send: async ({ password }) => {
      if (purpose === 'disable') {
        await disable.mutateAsync(password);
        onDone(null);
      } else {
        onDone((await regenerate.mutateAsync(password)).backupCodes);
      }
    },
    explain: refusalOnField(form.setError, 'password', ['password is incorrect']),
  });

  return (
    <Form noValidate onSubmit={submit} data-testid={`${prefix}-form`} className="password-prompt">
      <p className="small">{t(purpose === 'disable' ? 'twoStep.disableLead' : 'twoStep.regenerateLead')}</p>
      <FormField
        form={form}
        name="password"
        id={`${prefix}-password`}
        label={t('account.currentPassword')}
        type="password"
        autoComplete="current-password"
      />
      <div className="d-flex gap-2">
        <SubmitButton
          busy={disable.isPending || regenerate.isPending}
          variant={purpose === 'disable' ? 'danger' : 'primary'}
          testId={`${prefix}-submit`}
        >
          {t(purpose === 'disable' ? 'twoStep.disableSubmit' : 'twoStep.regenerateSubmit')}
        </SubmitButton>
        <Button variant="outline-secondary" onClick={onCancel} data-testid={`${prefix}-cancel`}>
          {t('common.cancel')}
        </Button>
      </div>
    </Form>
  );
}

export function TwoStepSection({ user }: { user: User }) {
  const { t } = useTranslation();
  const handleError = useApiErrorHandler();
  const revalidator = useRevalidator();
  const begin = useTotpBegin();
  const [mode, setMode] = useState<Mode>({ kind: 'status' });
  const status = () => setMode({ kind: 'status' });
  // The session says whether two-step authentication is on: read it again after each change.
  const refresh = () => void revalidator.revalidate();

  const start = async () => {
    try {
      setMode({ kind: 'enrolling', enrolment: await begin.mutateAsync() });
    } catch (error) {
      handleError(error, { action: 'twoStep' });
    }
  };

  return (
    <SectionCard
      id="two-step"
      title={t('account.twoStep')}
      lead={t('twoStep.lead')}
      actions={<EnabledBadge enabled={user.totpEnabled} testId="totp-status" />}
    >
      {mode.kind === 'status' &&
        (user.totpEnabled ? (
          <div className="d-flex flex-wrap gap-2">
            <Button
              variant="outline-primary"
              onClick={() => setMode({ kind: 'password', purpose: 'regenerate' })}
              data-testid="backup-regenerate"
            >
              {t('twoStep.regenerate')}
            </Button>
            <Button
              variant="outline-danger"
              onClick={() => setMode({ kind: 'password', purpose: 'disable' })}
              data-testid="totp-disable"
            >
              {t('twoStep.disable')}
            </Button>
          </div>
        ) : (
          <>
            <p className="small text-body-secondary">{t('twoStep.offLead')}</p>
            <Button disabled={begin.isPending} onClick={() => void start()} data-testid="totp-begin">
              {t('twoStep.enable')}
            </Button>
          </>
        ))}
      {mode.kind === 'enrolling' && (
        <EnrolForm
          enrolment={mode.enrolment}
          onEnabled={(codes) => {
            setMode({ kind: 'codes', codes });
            flash.now({ variant: 'success', key: 'twoStep.enabled', action: 'twoStep' });
            refresh();
          }}
          onCancel={status}
        />
      )}
      {mode.kind === 'codes' && <BackupCodes codes={mode.codes} onDone={status} />}
      {mode.kind === 'password' && (
        <PasswordPrompt
          purpose={mode.purpose}
          onCancel={status}
          onDone={(codes) => {
            if (codes) {
              setMode({ kind: 'codes', codes });
              flash.now({ variant: 'success', key: 'twoStep.regenerated', action: 'twoStep' });
            } else {
              status();
              flash.now({ variant: 'success', key: 'twoStep.disabled', action: 'twoStep' });
              refresh();
            }
          }}
        />
      )}
    </SectionCard>
  );
}
