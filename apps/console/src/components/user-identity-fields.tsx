import type { ReactNode } from 'react';
import Col from 'react-bootstrap/Col';
import Row from 'react-bootstrap/Row';
import type { FieldError as HookFieldError, UseFormRegisterReturn } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { PasswordPairFields } from './password-pair-fields.tsx';
import { TextField } from './text-field.tsx';

/**
 * A user's e-mail address and full name, and for a new user the initial password twice. The
 * inputs are `{idPrefix}-email`, `-full-name`, `-password` and `-password-confirmation`.
 * Autocompletion is off: the administrator types someone else's details, not their own.
 */
export function UserIdentityFields({
  idPrefix,
  email,
  fullName,
  initialPassword,
  errors,
  emailDisabled,
  emailHelp,
}: {
  idPrefix: string;
  email: UseFormRegisterReturn;
  fullName: UseFormRegisterReturn;
  initialPassword?: { password: UseFormRegisterReturn; confirmation: UseFormRegisterReturn };
  errors:
    | {
        emailAddress?: HookFieldError;
        fullName?: HookFieldError;
        password?: HookFieldError;
        confirmation?: HookFieldError;
      }
    | undefined;
  emailDisabled?: boolean;
  emailHelp?: ReactNode;
}) {
  const { t } = useTranslation();
  return (
    <Row>
      <Col md={6}>
        <TextField
          id={`${idPrefix}-email`}
          label={t('member.emailAddress')}
          type="email"
          autoComplete="off"
          disabled={emailDisabled}
          registration={email}
          error={errors?.emailAddress}
          help={emailHelp}
        />
      </Col>
      <Col md={6}>
        <TextField
          id={`${idPrefix}-full-name`}
          label={t('member.fullName')}
          autoComplete="off"
          registration={fullName}
          error={errors?.fullName}
        />
      </Col>
      {initialPassword && (
        <PasswordPairFields
          columns
          ids={{ password: `${idPrefix}-password`, confirmation: `${idPrefix}-password-confirmation` }}
          labels={{ password: t('member.initialPassword'), confirmation: t('member.passwordConfirmation') }}
          password={initialPassword.password}
          confirmation={initialPassword.confirmation}
          errors={{ password: errors?.password, confirmation: errors?.confirmation }}
          help={t('member.initialPasswordHelp')}
        />
      )}
    </Row>
  );
}
