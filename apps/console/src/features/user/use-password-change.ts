import { zodResolver } from '@hookform/resolvers/zod';
import { useForm, type UseFormReturn } from 'react-hook-form';
import { loginPassword, operations, type ErrorCode } from '@ukiyo/contract';
import { confirmationMatches } from '@/lib/password-confirmation.ts';
import { refusalOnField, useFormSubmit } from '@/lib/use-form-submit.ts';
import { useUpdatePassword } from '@/features/user/api/user-api.ts';

// The operation's own rules for both passwords, plus the confirmation only the form has.
const schema = operations['user.update_password'].input
  .omit({ userId: true })
  .extend({ confirmation: loginPassword() })
  .refine(...confirmationMatches('newPassword'));

/** The form's values, the same before and after the check. */
export interface PasswordChange {
  oldPassword: string;
  newPassword: string;
  confirmation: string;
}

/**
 * A signed-in user's change of password, as the account page's section and the page a first
 * login leads to both ask for it: the form, its submit and whether the call runs. Refusals with
 * `oldPasswordCodes` are shown on the current password's field.
 */
export function usePasswordChange({
  userId,
  oldPasswordCodes,
  onChanged,
}: {
  userId: number;
  oldPasswordCodes: readonly ErrorCode[];
  onChanged: (form: UseFormReturn<PasswordChange>) => Promise<void> | void;
}) {
  const update = useUpdatePassword();
  const form = useForm({
    resolver: zodResolver(schema),
    defaultValues: { oldPassword: '', newPassword: '', confirmation: '' },
  });
  const submit = useFormSubmit(form, {
    action: 'password',
    send: async ({ oldPassword, newPassword }) => {
      await update.mutateAsync({ userId, oldPassword, newPassword });
      await onChanged(form);
    },
    explain: refusalOnField(form.setError, 'oldPassword', oldPasswordCodes),
  });
  return { form, submit, busy: update.isPending };
}
