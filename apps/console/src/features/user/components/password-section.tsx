import Form from 'react-bootstrap/Form';
import { useTranslation } from 'react-i18next';
import type { ErrorCode, User } from '@ukiyo/contract';
import { SubmitButton } from '@/components/submit-button.tsx';
import { flash } from '@/lib/flash.ts';
import { ChangePasswordFields } from './change-password-fields.tsx';
import { SectionCard } from './section-card.tsx';
import { usePasswordChange } from '@/features/user/use-password-change.ts';

/** Refusals about the current password belong on its field. */
const OLD_PASSWORD_CODES: ErrorCode[] = ['wrong old password', 'password too long'];

export function PasswordSection({ user }: { user: User }) {
  const { t } = useTranslation();
  const { form, submit, busy } = usePasswordChange({
    userId: user.userID,
    oldPasswordCodes: OLD_PASSWORD_CODES,
    onChanged: (changed) => {
      changed.reset();
      flash.now({ variant: 'success', key: 'account.passwordChanged', action: 'password' });
    },
  });

  return (
    <SectionCard id="password" title={t('account.password')} lead={t('account.passwordLead')}>
      <Form noValidate onSubmit={submit} data-testid="password-form">
        <ChangePasswordFields
          form={form}
          ids={{ old: 'password-old', password: 'password-new', confirmation: 'password-confirmation' }}
          labels={{
            old: t('account.currentPassword'),
            password: t('account.newPassword'),
            confirmation: t('account.newPasswordConfirmation'),
          }}
          help={t('updatePassword.rules')}
        />
        <SubmitButton busy={busy} testId="password-submit">
          {t('account.changePassword')}
        </SubmitButton>
      </Form>
    </SectionCard>
  );
}
