import type { ReactNode } from 'react';
import Form from 'react-bootstrap/Form';
import type { FieldError as HookFieldError, UseFormRegisterReturn } from 'react-hook-form';
import { FieldError } from './field-error.tsx';

/** A labelled input bound to react-hook-form, with its error below; `id` is also its test ID. */
export function TextField({
  id,
  label,
  registration,
  error,
  type = 'text',
  as,
  rows,
  autoComplete,
  autoFocus,
  inputMode,
  help,
  disabled,
  readOnly,
  placeholder,
  className = 'mb-3',
}: {
  id: string;
  label: ReactNode;
  registration: UseFormRegisterReturn;
  error: HookFieldError | undefined;
  type?: string;
  as?: 'textarea';
  rows?: number;
  autoComplete?: string;
  autoFocus?: boolean;
  inputMode?: 'numeric';
  help?: ReactNode;
  disabled?: boolean;
  readOnly?: boolean;
  placeholder?: string;
  className?: string;
}) {
  return (
    <Form.Group className={className} controlId={id}>
      <Form.Label>{label}</Form.Label>
      <Form.Control
        type={as ? undefined : type}
        as={as}
        rows={rows}
        autoComplete={autoComplete}
        autoFocus={autoFocus}
        inputMode={inputMode}
        disabled={disabled}
        readOnly={readOnly}
        placeholder={placeholder}
        isInvalid={!!error}
        data-testid={id}
        {...registration}
      />
      <FieldError error={error} />
      {help && <Form.Text className="d-block">{help}</Form.Text>}
    </Form.Group>
  );
}
