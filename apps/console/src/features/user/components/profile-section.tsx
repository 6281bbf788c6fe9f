import { zodResolver } from '@hookform/resolvers/zod';
import Form from 'react-bootstrap/Form';
import { useForm, useWatch } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { useRevalidator } from 'react-router';
import { operations, type User } from '@ukiyo/contract';
import { SubmitButton } from '@/components/submit-button.tsx';
import { FormField } from '@/components/form-field.tsx';
import { refusalOnField, useFormSubmit } from '@/lib/use-form-submit.ts';
import { flash } from '@/lib/flash.ts';
import { useUpdateProfile } from '@/features/user/api/user-api.ts';
import { SectionCard } from './section-card.tsx';

const schema = operations['user.update'].input.pick({ emailAddress: true, fullName: true, password: true });

const sameAddress = (a: string, b: string) => a.trim().toLowerCase() === b.trim().toLowerCase();

export function ProfileSection({ user }: { user: User }) {
  const { t } = useTranslation();
  const revalidator = useRevalidator();
  const update = useUpdateProfile();
  const form = useForm({
    resolver: zodResolver(schema),
    defaultValues: { emailAddress: user.emailAddress, fullName: user.fullName, password: '' },
  });
  // The address signs the user in: changing it asks for the password (the server checks it).
  const emailChanges = !sameAddress(
    useWatch({ control: form.control, name: 'emailAddress' }),
    user.emailAddress,
  );

  const submit = useFormSubmit(form, {
    action: 'profile',
    send: async ({ emailAddress, fullName, password }) => {
      const changes = !sameAddress(emailAddress, user.emailAddress);
      if (changes && !password) {
        form.setError('password', { type: 'required', message: 'validation.required' });
        return;
      }
      await update.mutateAsync({
        oldEmailAddress: user.emailAddress,
        emailAddress,
        fullName,
        // One's own permissions are not edited here: sent back unchanged.
        permission: user.permission,
        ...(changes ? { password } : {}),
      });
      form.reset({ emailAddress, fullName, password: '' });
      flash.now({ variant: 'success', key: 'account.profileUpdated', action: 'profile' });
      void revalidator.revalidate();
    },
    explain: refusalOnField(form.setError, 'password', ['password is incorrect']),
  });

  return (
    <SectionCard id="profile" title={t('account.profile')}>
      <Form noValidate onSubmit={submit} data-testid="profile-form">
        <FormField
          form={form}
          name="fullName"
          id="profile-full-name"
          label={t('account.fullName')}
          autoComplete="name"
        />
        <FormField
          form={form}
          name="emailAddress"
          id="profile-email"
          label={t('account.emailAddress')}
          type="email"
          autoComplete="email"
        />
        {emailChanges && (
          <FormField
            form={form}
            name="password"
            id="profile-password"
            label={t('account.currentPassword')}
            type="password"
            autoComplete="current-password"
            help={t('account.emailPasswordHelp')}
          />
        )}
        <SubmitButton busy={update.isPending} testId="profile-submit">
          {t('common.save')}
        </SubmitButton>
      </Form>
    </SectionCard>
  );
}
