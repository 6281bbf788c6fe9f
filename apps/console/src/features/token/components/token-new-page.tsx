import { zodResolver } from '@hookform/resolvers/zod';
import { useState } from 'react';
import Alert from 'react-bootstrap/Alert';
import Button from 'react-bootstrap/Button';
import Card from 'react-bootstrap/Card';
import Form from 'react-bootstrap/Form';
import { useController, useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import {
  isAdministrator,
  operations,
  TOKEN_PERMISSION_GROUPS,
  type OperationOutput,
  type Operations,
} from '@ukiyo/contract';
import { paths } from '@/app/paths.ts';
import { FieldError } from '@/components/field-error.tsx';
import { FormActions } from '@/components/form-actions.tsx';
import { PageHeader } from '@/components/page-header.tsx';
import { FormField } from '@/components/form-field.tsx';
import { classifyApiError } from '@/lib/api-errors.ts';
import { useFormSubmit } from '@/lib/use-form-submit.ts';
import { flash } from '@/lib/flash.ts';
import { tokenGrantableMask, withBit } from '@/lib/permission-choices.ts';
import { useSession } from '@/lib/session.ts';
import { useAddToken } from '@/features/token/api/token-api.ts';
import { LinkButton } from '@/components/link-button.tsx';
import { SecretValue } from '@/components/secret-value.tsx';

type Issued = OperationOutput<Operations['auth_token.add']>;

// A token with an explicit mask of nothing could do nothing: one group at least, or "all".
const schema = operations['auth_token.add'].input.refine(
  (form) => form.authToken.permission === null || (form.authToken.permission ?? 0) > 0,
  { path: ['authToken', 'permission'], message: 'validation.required' },
);

function PermissionChoice({
  value,
  onChange,
  grantable,
  error,
}: {
  value: number | null;
  onChange: (mask: number | null) => void;
  grantable: number;
  error: { message?: string } | undefined;
}) {
  const { t } = useTranslation();
  const all = value === null;
  return (
    <fieldset className="mb-3" data-testid="token-permission">
      <legend className="form-label fs-6">{t('token.permission')}</legend>
      <Form.Check
        type="checkbox"
        id="token-permission-all"
        checked={all}
        onChange={(event) => onChange(event.target.checked ? null : 0)}
        label={
          <>
            <span className="fw-semibold">{t('token.permissionAll')}</span>
            <span className="d-block small text-body-secondary">{t('token.permissionAllHelp')}</span>
          </>
        }
        data-testid="token-permission-all"
      />
      <div className="permission-grid mt-2 ps-4">
        {/* Only what the creator holds is offered: the server refuses a token carrying more. */}
        {TOKEN_PERMISSION_GROUPS.filter(([, bit]) => (grantable & bit) !== 0).map(([name, bit]) => {
          const checked = ((value ?? 0) & bit) !== 0;
          return (
            <Form.Check
              key={name}
              type="checkbox"
              id={`token-permission-${name}`}
              checked={all || checked}
              disabled={all}
              isInvalid={!!error}
              onChange={(event) => onChange(withBit(value ?? 0, bit, event.target.checked))}
              label={
                <>
                  {t(`tokenPermission.${name}`)}
                  <span className="d-block small text-body-secondary">
                    {t(`tokenPermission.${name}.help`)}
                  </span>
                </>
              }
              data-testid={`token-permission-${name}`}
              data-bit={bit}
            />
          );
        })}
      </div>
      <FieldError error={error} block />
    </fieldset>
  );
}

function IssuedToken({ issued, onAnother }: { issued: Issued; onAnother: () => void }) {
  const { t } = useTranslation();
  return (
    <Card className="shadow-sm border-0 border-top border-success border-3" data-testid="token-issued">
      <Card.Body className="p-4">
        <h2 className="h5">{t('token.issuedTitle')}</h2>
        <Alert variant="warning" className="small" data-testid="token-once-warning">
          {t('token.onceWarning')}
        </Alert>
        <dl className="mb-4">
          <dt className="mb-1">{t('token.secret')}</dt>
          <dd className="mb-3">
            <SecretValue value={issued.authToken.token} testId="token-secret" />
          </dd>
          <dt className="mb-1">{t('token.encoded')}</dt>
          <dd className="mb-0">
            <SecretValue value={issued.encodedToken} testId="token-encoded" />
            <div className="small text-body-secondary mt-2">{t('token.encodedHelp')}</div>
          </dd>
        </dl>
        <div className="d-flex gap-2">
          <LinkButton to={paths.tokenIndex()} variant="primary" testId="token-back">
            {t('token.backToList')}
          </LinkButton>
          <Button variant="outline-secondary" onClick={onAnother} data-testid="token-issue-another">
            {t('token.issueAnother')}
          </Button>
        </div>
      </Card.Body>
    </Card>
  );
}

export function TokenNewPage() {
  const { t } = useTranslation();
  const { user } = useSession();
  const add = useAddToken();
  // The secret exists only in this answer: it lives in this page's state and nowhere else.
  const [issued, setIssued] = useState<Issued | null>(null);
  const form = useForm({
    resolver: zodResolver(schema),
    defaultValues: { authToken: { enabled: true, description: '', permission: null } },
  });
  const { errors } = form.formState;
  const { field: permission } = useController({ control: form.control, name: 'authToken.permission' });

  const submit = useFormSubmit(form, {
    action: 'token',
    send: async (input) => {
      setIssued(await add.mutateAsync(input));
      flash.now({ variant: 'success', key: 'token.issued', action: 'token' });
    },
    explain: (error) => {
      const kind = classifyApiError(error).kind;
      if (kind !== 'message' && kind !== 'internal') return false;
      flash.now({ variant: 'danger', key: 'error.tokenIssueFailed', action: 'token' });
      return true;
    },
  });

  const another = () => {
    setIssued(null);
    form.reset();
  };

  return (
    <>
      <PageHeader title={t('title.tokenNew')} lead={t('token.newLead')} />
      {issued ? (
        <IssuedToken issued={issued} onAnother={another} />
      ) : (
        <Card className="shadow-sm border-0 form-card">
          <Card.Body className="p-4">
            <Form noValidate onSubmit={submit} data-testid="token-form">
              <FormField
                form={form}
                name="authToken.description"
                id="token-description"
                label={t('token.description')}
                help={t('token.descriptionHelp')}
              />
              <Form.Group className="mb-3" controlId="token-enabled">
                <Form.Check
                  type="switch"
                  label={t('token.enabledLabel')}
                  data-testid="token-enabled"
                  {...form.register('authToken.enabled')}
                />
              </Form.Group>
              <PermissionChoice
                value={permission.value ?? null}
                onChange={permission.onChange}
                grantable={tokenGrantableMask(user?.permission ?? 0)}
                error={errors.authToken?.permission}
              />
              {isAdministrator(user?.permission ?? 0) && (
                <p className="small text-body-secondary">{t('token.adminHelp')}</p>
              )}
              <FormActions
                busy={add.isPending}
                submitLabel={t('token.issueSubmit')}
                cancelTo={paths.tokenIndex()}
                testIdPrefix="token"
              />
            </Form>
          </Card.Body>
        </Card>
      )}
    </>
  );
}
