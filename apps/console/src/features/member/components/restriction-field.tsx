import Form from 'react-bootstrap/Form';
import {
  get,
  useController,
  useFormState,
  type Control,
  type FieldError,
  type FieldPathByValue,
  type FieldValues,
} from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import type { Organization } from '@ukiyo/contract';
import { translateRef } from '@/lib/i18n.ts';

/**
 * Which organizations of the account a member reaches: all of them (an empty list on the wire),
 * or those chosen. Only organizations of the current account can be named.
 */
export function RestrictionField<T extends FieldValues, Context, Output>({
  control,
  names,
  organizations,
}: {
  control: Control<T, Context, Output>;
  /** The form's switch between all and chosen organizations, and the chosen ones' IDs. */
  names: {
    restricted: FieldPathByValue<T, boolean>;
    organizationIDs: FieldPathByValue<T, number[] | undefined>;
  };
  organizations: readonly Organization[];
}) {
  const { t } = useTranslation();
  const { field: restrictedField } = useController({ control, name: names.restricted });
  const { field: organizationIDsField } = useController({ control, name: names.organizationIDs });
  const { errors } = useFormState({ control, name: names.organizationIDs });
  const restricted = restrictedField.value as boolean;
  const organizationIDs = (organizationIDsField.value as number[] | undefined) ?? [];
  // Once all organizations are reached, the chosen ones no longer matter, nor do their checks.
  const error = restricted
    ? (get(errors, names.organizationIDs) as FieldError | undefined)?.message
    : undefined;
  const toggle = (id: number, on: boolean) =>
    organizationIDsField.onChange(
      on ? [...organizationIDs.filter((other) => other !== id), id] : organizationIDs.filter((o) => o !== id),
    );
  return (
    <fieldset className="mb-3" data-testid="member-restriction">
      <legend className="form-label fs-6">{t('member.restriction')}</legend>
      <Form.Check
        type="radio"
        id="member-restriction-all"
        name="member-restriction"
        checked={!restricted}
        onChange={() => restrictedField.onChange(false)}
        label={t('member.restrictionAll')}
        data-testid="member-restriction-all"
      />
      <Form.Check
        type="radio"
        id="member-restriction-selected"
        name="member-restriction"
        checked={restricted}
        onChange={() => restrictedField.onChange(true)}
        label={t('member.restrictionSelected')}
        data-testid="member-restriction-selected"
      />
      {restricted && (
        <div className="border rounded p-3 mt-2 bg-body-tertiary">
          {organizations.length === 0 && (
            <p className="small text-body-secondary mb-0">{t('member.restrictionNoOrganization')}</p>
          )}
          {organizations.map((organization) => (
            <Form.Check
              key={organization.organizationID}
              type="checkbox"
              id={`member-organization-${organization.organizationID}`}
              checked={organizationIDs.includes(organization.organizationID)}
              isInvalid={!!error}
              onChange={(event) => toggle(organization.organizationID, event.target.checked)}
              label={
                <>
                  {organization.name}{' '}
                  <span className="small text-body-secondary">({organization.serviceCode})</span>
                </>
              }
              data-testid="member-organization"
              data-organization-id={organization.organizationID}
              data-service-code={organization.serviceCode}
            />
          ))}
          {error && (
            <div className="invalid-feedback d-block" data-testid="member-restriction-error">
              {translateRef(t, error)}
            </div>
          )}
        </div>
      )}
    </fieldset>
  );
}
