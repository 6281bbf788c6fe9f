import { zodResolver } from '@hookform/resolvers/zod';
import Button from 'react-bootstrap/Button';
import Card from 'react-bootstrap/Card';
import Form from 'react-bootstrap/Form';
import Spinner from 'react-bootstrap/Spinner';
import { useForm, type FieldError as HookFieldError, type UseFormRegisterReturn } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { useNavigate, useParams } from 'react-router';
import { loginPassword, operations } from '@ukiyo/contract';
import { paths } from '../../../app/routes.ts';
import { FieldError } from '../../../components/field-error.tsx';
import { PageHeader } from '../../../components/page-header.tsx';
import { ApiError } from '../../../lib/api-client.ts';
import { useApiErrorHandler } from '../../../lib/api-errors.ts';
import { flash } from '../../../lib/flash.ts';
import { isActivated, useSession } from '../../../lib/session.ts';
import { useUpdatePassword } from '../api/user-api.ts';

// The operation's own rules for both passwords, plus the confirmation only the form has.
const schema = operations['user.update_password'].input
  .omit({ userId: true })
  .extend({ confirmation: loginPassword() })
  .refine((form) => form.newPassword === form.confirmation, {
    path: ['confirmation'],
    message: 'validation.notMatch',
  });

function PasswordField({
  id,
  label,
  autoComplete,
  error,
  registration,
}: {
  id: string;
  label: string;
  autoComplete: string;
  error: HookFieldError | undefined;
  registration: UseFormRegisterReturn;
}) {
  return (
    <Form.Group className="mb-3" controlId={id}>
      <Form.Label>{label}</Form.Label>
      <Form.Control
        type="password"
        autoComplete={autoComplete}
        isInvalid={!!error}
        data-testid={id}
        {...registration}
      />
      <FieldError error={error} />
    </Form.Group>
  );
}

export function UpdatePasswordPage() {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const handleError = useApiErrorHandler();
  const { user } = useSession();
  const { userId } = useParams();
  const update = useUpdatePassword();
  const {
    register,
    handleSubmit,
    setError,
    formState: { errors },
  } = useForm({
    resolver: zodResolver(schema),
    defaultValues: { oldPassword: '', newPassword: '', confirmation: '' },
  });

  const submit = handleSubmit(async ({ oldPassword, newPassword }) => {
    try {
      await update.mutateAsync({ userId: Number(userId), oldPassword, newPassword });
      flash.next({ variant: 'success', key: 'updatePassword.success' });
      await navigate(paths.home());
    } catch (error) {
      if (error instanceof ApiError && error.code === 'wrong old password') {
        setError('oldPassword', { type: 'server', message: error.messageKey });
      } else {
        handleError(error, { setError });
      }
    }
  });

  return (
    <div className="centered-panel wide">
      <PageHeader title={t('title.updatePassword')} />
      <Card className="shadow-sm border-0">
        <Card.Body className="p-4">
          {!isActivated(user) && (
            <p className="text-body-secondary small">{t('updatePassword.activationLead')}</p>
          )}
          <Form noValidate onSubmit={(event) => void submit(event)} data-testid="update-password-form">
            <PasswordField
              id="old-password"
              label={t('updatePassword.oldPassword')}
              autoComplete="current-password"
              error={errors.oldPassword}
              registration={register('oldPassword')}
            />
            <PasswordField
              id="new-password"
              label={t('updatePassword.newPassword')}
              autoComplete="new-password"
              error={errors.newPassword}
              registration={register('newPassword')}
            />
            <PasswordField
              id="password-confirmation"
              label={t('updatePassword.confirmation')}
              autoComplete="new-password"
              error={errors.confirmation}
              registration={register('confirmation')}
            />
            <Form.Text as="p" className="mb-4">
              {t('updatePassword.rules')}
            </Form.Text>
            <Button type="submit" disabled={update.isPending} data-testid="update-password-submit">
              {update.isPending && <Spinner size="sm" className="me-2" aria-hidden="true" />}
              {t('updatePassword.submit')}
            </Button>
          </Form>
        </Card.Body>
      </Card>
    </div>
  );
}
