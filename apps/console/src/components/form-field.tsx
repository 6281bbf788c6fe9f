import type { ComponentProps, ReactNode } from 'react';
import Form from 'react-bootstrap/Form';
import {
  get,
  useFormState,
  type FieldError as HookFieldError,
  type FieldValues,
  type Path,
  type RegisterOptions,
  type UseFormReturn,
} from 'react-hook-form';
import { FieldError } from './field-error.tsx';
import { TextField } from './text-field.tsx';

/** The part of a form that kit fields bind to (a field group passes it on to its fields). */
export type BoundForm<T extends FieldValues, Context, Output> = Pick<
  UseFormReturn<T, Context, Output>,
  'register' | 'control'
>;

/** What binds a kit field to its form: the form and the field's (dot) path in it. */
interface Binding<T extends FieldValues, Context, Output> {
  form: BoundForm<T, Context, Output>;
  name: Path<T>;
  /** Checks of a form without a schema. */
  rules?: RegisterOptions<T, Path<T>>;
}

/** The field's registration and its error (also a nested one, e.g. `s3.bucket`). */
export function useBinding<T extends FieldValues, Context, Output>({
  form,
  name,
  rules,
}: Binding<T, Context, Output>) {
  const { errors } = useFormState({ control: form.control, name });
  return {
    registration: form.register(name, rules),
    error: get(errors, name) as HookFieldError | undefined,
  };
}

/** A `TextField` bound to its form by name, so a page names each field once. */
export function FormField<T extends FieldValues, Context, Output>({
  form,
  name,
  rules,
  ...field
}: Omit<ComponentProps<typeof TextField>, 'registration' | 'error'> & Binding<T, Context, Output>) {
  const { registration, error } = useBinding({ form, name, rules });
  return <TextField {...field} registration={registration} error={error} />;
}

/** A labelled select bound to its form by name, with its error below; `id` is also its test ID unless one is given. */
export function SelectField<T extends FieldValues, Context, Output>({
  form,
  name,
  rules,
  id,
  testId = id,
  label,
  options,
  choose,
  className,
}: Binding<T, Context, Output> & {
  id: string;
  testId?: string;
  label: ReactNode;
  options: readonly { value: string | number; label: string }[];
  /** The label of a first, empty option: nothing is chosen yet. */
  choose?: string;
  className?: string;
}) {
  const { registration, error } = useBinding({ form, name, rules });
  return (
    <Form.Group className={className} controlId={id}>
      <Form.Label>{label}</Form.Label>
      <Form.Select isInvalid={!!error} data-testid={testId} {...registration}>
        {choose !== undefined && <option value="">{choose}</option>}
        {options.map((option) => (
          <option key={option.value} value={option.value}>
            {option.label}
          </option>
        ))}
      </Form.Select>
      <FieldError error={error} />
    </Form.Group>
  );
}
