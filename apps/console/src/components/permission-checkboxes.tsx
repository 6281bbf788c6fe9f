import Form from 'react-bootstrap/Form';
import { Controller, type Control, type FieldPathByValue, type FieldValues } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { Permission } from '@ukiyo/contract';
import { FieldError } from './field-error.tsx';
import { bitCheckbox, MEMBER_PERMISSIONS, withBit } from '@/lib/permission-choices.ts';

/**
 * A user's permission mask as checkboxes. Only bits in `grantable` can be set (the server would
 * refuse the others); the administrator bit shows only where it can be granted or is already set.
 * Each box is `{testId}-{name}` with `data-bit`.
 */
export function PermissionCheckboxes({
  value,
  onChange,
  grantable,
  testId,
  invalid = false,
}: {
  value: number;
  onChange: (mask: number) => void;
  grantable: number;
  testId: string;
  invalid?: boolean;
}) {
  const { t } = useTranslation();
  const choices = MEMBER_PERMISSIONS.filter(
    ([, bit]) => bit !== Permission.admin || (grantable & bit) !== 0 || (value & bit) !== 0,
  );
  return (
    <div className="permission-grid" data-testid={testId}>
      {choices.map(([name, bit]) => {
        const state = bitCheckbox(value, bit, grantable);
        return (
          <Form.Check
            key={name}
            type="checkbox"
            id={`${testId}-${name}`}
            checked={state.checked}
            disabled={state.disabled}
            isInvalid={invalid}
            onChange={(event) => onChange(withBit(value, bit, event.target.checked))}
            label={
              <>
                <span className={bit === Permission.admin ? 'fw-semibold text-danger' : ''}>
                  {t(`permission.${name}`)}
                </span>
                <span className="d-block small text-body-secondary">{t(`permission.${name}.help`)}</span>
              </>
            }
            data-testid={`${testId}-${name}`}
            data-bit={bit}
          />
        );
      })}
    </div>
  );
}

/** The checkboxes bound to a form's permission mask, with the field's error below them. */
export function PermissionField<Values extends FieldValues>({
  control,
  name,
  grantable,
  testId,
}: {
  control: Control<Values>;
  name: FieldPathByValue<Values, number>;
  grantable: number;
  testId: string;
}) {
  return (
    <Controller
      control={control}
      name={name}
      render={({ field, fieldState }) => (
        <>
          <PermissionCheckboxes
            value={field.value as number}
            onChange={field.onChange}
            grantable={grantable}
            testId={testId}
            invalid={!!fieldState.error}
          />
          <FieldError error={fieldState.error} block />
        </>
      )}
    />
  );
}
