import { zodResolver } from '@hookform/resolvers/zod';
import Card from 'react-bootstrap/Card';
import Form from 'react-bootstrap/Form';
import { useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { useNavigate, useParams } from 'react-router';
import { loginPassword, operations } from '@ukiyo/contract';
import { paths } from '@/app/paths.ts';
import { PageHeader } from '@/components/page-header.tsx';
import { PasswordPairFields } from '@/components/password-pair-fields.tsx';
import { SubmitButton } from '@/components/submit-button.tsx';
import { FormField } from '@/components/form-field.tsx';
import { refusalOnField, useFormSubmit } from '@/lib/use-form-submit.ts';
import { flash } from '@/lib/flash.ts';
import { isActivated, useSession } from '@/lib/session.ts';
import { useUpdatePassword } from '@/features/user/api/user-api.ts';
import { confirmationMatches } from '@/lib/password-confirmation.ts';

// The operation's own rules for both passwords, plus the confirmation only the form has.
const schema = operations['user.update_password'].input
  .omit({ userId: true })
  .extend({ confirmation: loginPassword() })
  .refine(...confirmationMatches('newPassword'));

export function UpdatePasswordPage() {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const { user } = useSession();
  const { userId } = useParams();
  const update = useUpdatePassword();
  const form = useForm({
    resolver: zodResolver(schema),
    defaultValues: { oldPassword: '', newPassword: '', confirmation: '' },
  });
  const { errors } = form.formState;
  const submit = useFormSubmit(form, {
    action: 'password',
    send: async ({ oldPassword, newPassword }) => {
      await update.mutateAsync({ userId: Number(userId), oldPassword, newPassword });
      flash.next({ variant: 'success', key: 'updatePassword.success', action: 'password' });
      await navigate(paths.home());
    },
    explain: refusalOnField(form.setError, 'oldPassword', ['wrong old password']),
  });

  return (
    <div className="centered-panel wide">
      <PageHeader title={t('title.updatePassword')} />
      <Card className="shadow-sm border-0">
        <Card.Body className="p-4">
          {!isActivated(user) && (
            <p className="text-body-secondary small">{t('updatePassword.activationLead')}</p>
          )}
          <Form noValidate onSubmit={submit} data-testid="update-password-form">
            <FormField
              form={form}
              name="oldPassword"
              id="old-password"
              label={t('updatePassword.oldPassword')}
              type="password"
              autoComplete="current-password"
            />
            <PasswordPairFields
              ids={{ password: 'new-password', confirmation: 'password-confirmation' }}
              labels={{
                password: t('updatePassword.newPassword'),
                confirmation: t('updatePassword.confirmation'),
              }}
              password={form.register('newPassword')}
              confirmation={form.register('confirmation')}
              errors={{ password: errors.newPassword, confirmation: errors.confirmation }}
            />
            <Form.Text as="p" className="mb-4">
              {t('updatePassword.rules')}
            </Form.Text>
            <SubmitButton busy={update.isPending} testId="update-password-submit">
              {t('updatePassword.submit')}
            </SubmitButton>
          </Form>
        </Card.Body>
      </Card>
    </div>
  );
}
