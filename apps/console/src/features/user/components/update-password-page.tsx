import Card from 'react-bootstrap/Card';
import Form from 'react-bootstrap/Form';
import { useTranslation } from 'react-i18next';
import { useNavigate, useParams } from 'react-router';
import { paths } from '@/app/paths.ts';
import { PageHeader } from '@/components/page-header.tsx';
import { SubmitButton } from '@/components/submit-button.tsx';
import { flash } from '@/lib/flash.ts';
import { isActivated, useSession } from '@/lib/session.ts';
import { usePasswordChange } from '@/features/user/use-password-change.ts';
import { ChangePasswordFields } from './change-password-fields.tsx';

export function UpdatePasswordPage() {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const { user } = useSession();
  const { userId } = useParams();
  const { form, submit, busy } = usePasswordChange({
    userId: Number(userId),
    oldPasswordCodes: ['wrong old password'],
    onChanged: async () => {
      flash.next({ variant: 'success', key: 'updatePassword.success', action: 'password' });
      await navigate(paths.home());
    },
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
            <ChangePasswordFields
              form={form}
              ids={{ old: 'old-password', password: 'new-password', confirmation: 'password-confirmation' }}
              labels={{
                old: t('updatePassword.oldPassword'),
                password: t('updatePassword.newPassword'),
                confirmation: t('updatePassword.confirmation'),
              }}
            />
            <Form.Text as="p" className="mb-4">
              {t('updatePassword.rules')}
            </Form.Text>
            <SubmitButton busy={busy} testId="update-password-submit">
              {t('updatePassword.submit')}
            </SubmitButton>
          </Form>
        </Card.Body>
      </Card>
    </div>
  );
}
