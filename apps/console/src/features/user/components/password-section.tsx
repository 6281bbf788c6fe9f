import { zodResolver } from '@hookform/resolvers/zod';
import Form from 'react-bootstrap/Form';
import { useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { loginPassword, operations, type User } from '@ukiyo/contract';
import { PasswordPairFields } from '../../../components/password-pair-fields.tsx';
import { SubmitButton } from '../../../components/submit-button.tsx';
import { TextField } from '../../../components/text-field.tsx';
import { ApiError } from '../../../lib/api-client.ts';
import { useApiErrorHandler } from '../../../lib/api-errors.ts';
import { flash } from '../../../lib/flash.ts';
import { useUpdatePassword } from '../api/user-api.ts';
import { SectionCard } from './section-card.tsx';
import { confirmationMatches } from '../../../lib/password-confirmation.ts';

const schema = operations['user.update_password'].input
  .omit({ userId: true })
  .extend({ confirmation: loginPassword() })
  .refine(...confirmationMatches('newPassword'));

/** Refusals about the current password belong on its field. */
const OLD_PASSWORD_CODES = ['wrong old password', 'password too long'];

export function PasswordSection({ user }: { user: User }) {
  const { t } = useTranslation();
  const handleError = useApiErrorHandler();
  const update = useUpdatePassword();
  const {
    register,
    handleSubmit,
    setError,
    reset,
    formState: { errors },
  } = useForm({
    resolver: zodResolver(schema),
    defaultValues: { oldPassword: '', newPassword: '', confirmation: '' },
  });

  const submit = handleSubmit(async ({ oldPassword, newPassword }) => {
    try {
      await update.mutateAsync({ userId: user.userID, oldPassword, newPassword });
      reset();
      flash.now({ variant: 'success', key: 'account.passwordChanged', action: 'password' });
    } catch (error) {
      if (error instanceof ApiError && OLD_PASSWORD_CODES.includes(error.code)) {
        setError('oldPassword', { type: 'server', message: error.messageKey });
      } else {
        handleError(error, { setError, action: 'password' });
      }
    }
  });

  return (
    <SectionCard id="password" title={t('account.password')} lead={t('account.passwordLead')}>
      <Form noValidate onSubmit={(event) => void submit(event)} data-testid="password-form">
        <TextField
          id="password-old"
          label={t('account.currentPassword')}
          type="password"
          autoComplete="current-password"
          registration={register('oldPassword')}
          error={errors.oldPassword}
        />
        <PasswordPairFields
          ids={{ password: 'password-new', confirmation: 'password-confirmation' }}
          labels={{ password: t('account.newPassword'), confirmation: t('account.newPasswordConfirmation') }}
          password={register('newPassword')}
          confirmation={register('confirmation')}
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
