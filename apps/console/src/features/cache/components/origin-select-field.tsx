import type { FieldValues, Path } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { SelectField, type BoundForm } from '@/components/form-field.tsx';

export interface OriginChoice {
  originID: number;
  name: string;
  originName: string;
}

/** The origin a cache form acts on, by its custom domain where it has one; none chosen at first. */
export function OriginSelectField<T extends FieldValues, Context, Output>({
  form,
  name,
  id,
  origins,
}: {
  form: BoundForm<T, Context, Output>;
  name: Path<T>;
  id: string;
  origins: readonly OriginChoice[];
}) {
  const { t } = useTranslation();
  return (
    <SelectField
      form={form}
      name={name}
      id={id}
      label={t('cache.origin')}
      choose={t('cache.selectOrigin')}
      options={origins.map((origin) => ({ value: origin.originID, label: origin.originName || origin.name }))}
    />
  );
}
