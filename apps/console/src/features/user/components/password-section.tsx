import { zodResolver } from '@hookform/resolvers/zod';
import Form from 'react-bootstrap/Form';
import { useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { loginPassword, operations, type ErrorCode, type User } from '@ukiyo/contract';
import { PasswordPairFields } from '@/components/password-pair-fields.tsx';
import { SubmitButton } from '@/components/submit-button.tsx';
import { FormField } from '@/components/form-field.tsx';
import { refusalOnField, useFormSubmit } from '@/lib/use-form-submit.ts';
import { flash } from '@/lib/flash.ts';
import { useUpdatePassword } from '@/features/user/api/user-api.ts';
import { SectionCard } from './section-card.tsx';
import { confirmationMatches } from '@/lib/password-confirmation.ts';

const schema = operations['user.update_password'].input
  .omit({ userId: true })
  .extend({ confirmation: loginPassword() })
  .refine(...confirmationMatches('newPassword'));

/** Refusals about the current password belong on its field. */
const OLD_PASSWORD_CODES: ErrorCode[] = ['wrong old password', 'password too long'];

export function PasswordSection({ user }: { user: User }) {
  const { t } = useTranslation();
  const update = useUpdatePassword();
  const form = useForm({
    resolver: zodResolver(schema),
    defaultValues: { oldPassword: '', newPassword: '', confirmation: '' },
  });
  const { errors } = form.formState;
  const submit = useFormSubmit(form, {
    action: 'password',
    send: async ({ oldPassword, newPassword }) => {
      await update.mutateAsync({ userId: user.userID, oldPassword, newPassword });
      form.reset();
      flash.now({ variant: 'success', key: 'account.passwordChanged', action: 'password' });
    },
    explain: refusalOnField(form.setError, 'oldPassword', OLD_PASSWORD_CODES),
  });

  return (
    <SectionCard id="password" title={t('account.password')} lead={t('account.passwordLead')}>
      <Form noValidate onSubmit={submit} data-testid="password-form">
        <FormField
          form={form}
          name="oldPassword"
          id="password-old"
          label={t('account.currentPassword')}
          type="password"
          autoComplete="current-password"
        />
        <PasswordPairFields
          ids={{ password: 'password-new', confirmation: 'password-confirmation' }}
          labels={{ password: t('account.newPassword'), confirmation: t('account.newPasswordConfirmation') }}
          password={form.register('newPassword')}
          confirmation={form.register('confirmation')}
          errors={{ password: errors.newPassword, confirmation: errors.confirmation }}
          help={t('updatePassword.rules')}
        />
        <SubmitButton busy={update.isPending} testId="password-submit">
          {t('account.changePassword')}
        </SubmitButton>
      </Form>
    </SectionCard>
  );
}
