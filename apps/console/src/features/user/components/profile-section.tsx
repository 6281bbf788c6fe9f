import { zodResolver } from '@hookform/resolvers/zod';
import Form from 'react-bootstrap/Form';
import { useForm, useWatch } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { useRevalidator } from 'react-router';
import { operations, type User } from '@ukiyo/contract';
import { SubmitButton } from '../../../components/submit-button.tsx';
import { TextField } from '../../../components/text-field.tsx';
import { ApiError } from '../../../lib/api-client.ts';
import { useApiErrorHandler } from '../../../lib/api-errors.ts';
import { flash } from '../../../lib/flash.ts';
import { useUpdateProfile } from '../api/user-api.ts';
import { SectionCard } from './section-card.tsx';

const schema = operations['user.update'].input.pick({ emailAddress: true, fullName: true, password: true });

const sameAddress = (a: string, b: string) => a.trim().toLowerCase() === b.trim().toLowerCase();

export function ProfileSection({ user }: { user: User }) {
  const { t } = useTranslation();
  const handleError = useApiErrorHandler();
  const revalidator = useRevalidator();
  const update = useUpdateProfile();
  const {
    register,
    control,
    handleSubmit,
    setError,
    reset,
    formState: { errors },
  } = useForm({
    resolver: zodResolver(schema),
    defaultValues: { emailAddress: user.emailAddress, fullName: user.fullName, password: '' },
  });
  // The address signs the user in: changing it asks for the password (the server checks it).
  const emailChanges = !sameAddress(useWatch({ control, name: 'emailAddress' }), user.emailAddress);

  const submit = handleSubmit(async ({ emailAddress, fullName, password }) => {
    const changes = !sameAddress(emailAddress, user.emailAddress);
    if (changes && !password) {
      setError('password', { type: 'required', message: 'validation.required' });
      return;
    }
    try {
      await update.mutateAsync({
        oldEmailAddress: user.emailAddress,
        emailAddress,
        fullName,
        // One's own permissions are not edited here: sent back unchanged.
        permission: user.permission,
        ...(changes ? { password } : {}),
      });
      reset({ emailAddress, fullName, password: '' });
      flash.now({ variant: 'success', key: 'account.profileUpdated', action: 'profile' });
      void revalidator.revalidate();
    } catch (error) {
      if (error instanceof ApiError && error.code === 'password is incorrect') {
        setError('password', { type: 'server', message: error.messageKey });
      } else {
        handleError(error, { setError, action: 'profile' });
      }
    }
  });

  return (
    <SectionCard id="profile" title={t('account.profile')}>
      <Form noValidate onSubmit={(event) => void submit(event)} data-testid="profile-form">
        <TextField
          id="profile-full-name"
          label={t('account.fullName')}
          autoComplete="name"
          registration={register('fullName')}
          error={errors.fullName}
        />
        <TextField
          id="profile-email"
          label={t('account.emailAddress')}
          type="email"
          autoComplete="email"
          registration={register('emailAddress')}
          error={errors.emailAddress}
        />
        {emailChanges && (
          <TextField
            id="profile-password"
            label={t('account.currentPassword')}
            type="password"
            autoComplete="current-password"
            registration={register('password')}
            error={errors.password}
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
