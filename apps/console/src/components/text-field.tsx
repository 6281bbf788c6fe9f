import type { ReactNode } from 'react';
import Form from 'react-bootstrap/Form';
import type { FieldError as HookFieldError, UseFormRegisterReturn } from 'react-hook-form';
import { FieldError } from './field-error.tsx';

/** What the input itself takes, passed on to it as they are. */
interface InputProps {
  as?: 'textarea';
  rows?: number;
  autoComplete?: string;
  autoFocus?: boolean;
  inputMode?: 'numeric';
  disabled?: boolean;
  readOnly?: boolean;
  placeholder?: string;
  maxLength?: number;
  min?: number;
  max?: number;
  /** The ID of a `datalist` of suggestions. */
  list?: string;
}

/** A labelled input bound to react-hook-form, with its error below; `id` is also its test ID. */
export function TextField({
  id,
  label,
  registration,
  error,
  type = 'text',
  help,
  controlClassName,
  labelHidden = false,
  className = 'mb-3',
  ...input
}: InputProps & {
  id: string;
  label: ReactNode;
  registration: UseFormRegisterReturn;
  error: HookFieldError | undefined;
  type?: string;
  help?: ReactNode;
  /** Classes of the input itself (e.g. `font-monospace`); `className` is the group's. */
  controlClassName?: string;
  /** The label is for screen readers only: the field sits under a legend that says what it is. */
  labelHidden?: boolean;
  className?: string;
}) {
  return (
    <Form.Group className={className} controlId={id}>
      <Form.Label className={labelHidden ? 'visually-hidden' : undefined}>{label}</Form.Label>
      <Form.Control
        type={input.as ? undefined : type}
        {...input}
        className={controlClassName}
        isInvalid={!!error}
        data-testid={id}
        {...registration}
      />
      <FieldError error={error} />
      {help && <Form.Text className="d-block">{help}</Form.Text>}
    </Form.Group>
  );
}
