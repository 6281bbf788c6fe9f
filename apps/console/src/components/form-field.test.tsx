import { act, cleanup, render, screen } from '@testing-library/react';
import { useForm, type UseFormReturn } from 'react-hook-form';
import { afterEach, describe, expect, it } from 'vitest';
import '@/lib/i18n.ts';
import { FormField, SelectField } from './form-field.tsx';

afterEach(cleanup);

type Values = { s3: { bucket: string }; kind: string };

function Fields({ onForm }: { onForm: (form: UseFormReturn<Values>) => void }) {
  const form = useForm<Values>({ defaultValues: { s3: { bucket: 'b1' }, kind: 'b' } });
  onForm(form);
  return (
    <>
      <FormField form={form} name="s3.bucket" id="bucket" label="Bucket" />
      <SelectField
        form={form}
        name="kind"
        id="kind"
        label="Kind"
        choose="—"
        options={[
          { value: 'a', label: 'A' },
          { value: 'b', label: 'B' },
        ]}
      />
    </>
  );
}

describe('the form kit', () => {
  it('binds fields by name, nested paths included, and shows their errors', () => {
    let form: UseFormReturn<Values> | undefined;
    render(<Fields onForm={(given) => (form = given)} />);
    const bucket = screen.getByTestId('bucket') as HTMLInputElement;
    const kind = screen.getByTestId('kind') as HTMLSelectElement;
    expect(bucket.value).toBe('b1');
    expect(screen.getByLabelText('Bucket')).toBe(bucket);
    expect([...kind.options].map((option) => option.value)).toEqual(['', 'a', 'b']);
    expect(kind.value).toBe('b');

    act(() => form?.setError('s3.bucket', { type: 'server', message: 'validation.required' }));
    expect(bucket.classList).toContain('is-invalid');
    expect(kind.classList).not.toContain('is-invalid');
  });
});
