import type { ReactNode } from 'react';
import type { UseFormReturn } from 'react-hook-form';
import { FormField } from '@/components/form-field.tsx';
import { PasswordPairFields } from '@/components/password-pair-fields.tsx';
import type { PasswordChange } from '@/features/user/use-password-change.ts';

/** The current password, then the new one twice: the inputs of `usePasswordChange`. */
export function ChangePasswordFields({
  form,
  ids,
  labels,
  help,
}: {
  form: UseFormReturn<PasswordChange>;
  ids: { old: string; password: string; confirmation: string };
  labels: { old: ReactNode; password: ReactNode; confirmation: ReactNode };
  /** Under the new password (its rules). */
  help?: ReactNode;
}) {
  const { errors } = form.formState;
  return (
    <>
      <FormField
        form={form}
        name="oldPassword"
        id={ids.old}
        label={labels.old}
        type="password"
        autoComplete="current-password"
      />
      <PasswordPairFields
        ids={ids}
        labels={labels}
        password={form.register('newPassword')}
        confirmation={form.register('confirmation')}
        errors={{ password: errors.newPassword, confirmation: errors.confirmation }}
        help={help}
      />
    </>
  );
}
