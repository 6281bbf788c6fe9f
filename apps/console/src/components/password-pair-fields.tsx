import type { ReactNode } from 'react';
import Col from 'react-bootstrap/Col';
import type { FieldError as HookFieldError, UseFormRegisterReturn } from 'react-hook-form';
import { TextField } from './text-field.tsx';

/**
 * A new password and its confirmation. The forms check that both match with
 * `withPasswordConfirmation` (lib/password-confirmation.ts), which puts the mismatch on the
 * confirmation; the IDs are the forms' own test IDs, so they are named here, not derived.
 */
export function PasswordPairFields({
  ids,
  labels,
  password,
  confirmation,
  errors,
  help,
  columns = false,
  confirmationClassName,
}: {
  ids: { password: string; confirmation: string };
  labels: { password: ReactNode; confirmation: ReactNode };
  password: UseFormRegisterReturn;
  confirmation: UseFormRegisterReturn;
  errors: { password?: HookFieldError; confirmation?: HookFieldError };
  /** Shown under the password (its rules). */
  help?: ReactNode;
  /** Side by side in a `Row` of the caller's, as in the member forms. */
  columns?: boolean;
  confirmationClassName?: string;
}) {
  const registrations = { password, confirmation };
  const fields = (['password', 'confirmation'] as const).map((which) => (
    <TextField
      key={which}
      id={ids[which]}
      label={labels[which]}
      type="password"
      autoComplete="new-password"
      registration={registrations[which]}
      error={errors[which]}
      // The rules stand under the first field; the caller may space the last one.
      {...(which === 'password' ? { help } : { className: confirmationClassName })}
    />
  ));
  return columns ? (
    fields.map((field) => (
      <Col key={field.key} md={6}>
        {field}
      </Col>
    ))
  ) : (
    <>{fields}</>
  );
}
