import Col from 'react-bootstrap/Col';
import Form from 'react-bootstrap/Form';
import Row from 'react-bootstrap/Row';
import type { FieldValues, Path } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { PLAN_NAMES, type PlanNumber } from '@ukiyo/contract';
import { FormField, SelectField, type BoundForm } from '@/components/form-field.tsx';

export type OrganizationFieldName =
  'name' | 'serviceCode' | 'serviceDomain' | 'plan' | 'isLive' | 'enableTextOverlay' | 'description';

const PLANS: readonly PlanNumber[] = [1, 2, 3, 4];

/** The organization's text fields, side by side: their test IDs follow the prefix. */
const TEXT_FIELDS = [
  { name: 'name', id: 'organization-name', labelKey: 'userCreate.organizationName' },
  { name: 'serviceCode', id: 'service-code', labelKey: 'userCreate.serviceCode' },
  {
    name: 'serviceDomain',
    id: 'service-domain',
    labelKey: 'organization.serviceDomain',
    placeholder: 'www.example.com',
  },
] as const;

/** An organization's settings, as an administrator creates or edits them. */
export function OrganizationFields<T extends FieldValues, Context, Output>({
  form,
  field,
  prefix,
}: {
  form: BoundForm<T, Context, Output>;
  /** Where each of the organization's fields stands in the form (e.g. `organization.name`). */
  field: (name: OrganizationFieldName) => Path<T>;
  /** Test ID prefix: 'register' or 'organization-edit'. */
  prefix: string;
}) {
  const { t } = useTranslation();
  return (
    <>
      <Row>
        {TEXT_FIELDS.map(({ name, id, labelKey, ...input }) => (
          <Col md={6} key={name}>
            <FormField form={form} name={field(name)} id={`${prefix}-${id}`} label={t(labelKey)} {...input} />
          </Col>
        ))}
        <Col md={6}>
          <SelectField
            form={form}
            name={field('plan')}
            rules={{ valueAsNumber: true }}
            id={`${prefix}-plan`}
            label={t('userCreate.plan')}
            options={PLANS.map((plan) => ({ value: plan, label: t(`plan.name.${PLAN_NAMES[plan]}`) }))}
            className="mb-3"
          />
        </Col>
      </Row>
      <div className="d-flex flex-wrap gap-4 mb-3">
        <Form.Check
          type="switch"
          id={`${prefix}-is-live`}
          label={t('userCreate.isLive')}
          data-testid={`${prefix}-is-live`}
          {...form.register(field('isLive'))}
        />
        <Form.Check
          type="switch"
          id={`${prefix}-text-overlay`}
          label={t('userCreate.enableTextOverlay')}
          data-testid={`${prefix}-text-overlay`}
          {...form.register(field('enableTextOverlay'))}
        />
      </div>
      <FormField
        form={form}
        name={field('description')}
        id={`${prefix}-description`}
        label={t('organization.description')}
        as="textarea"
        rows={3}
      />
    </>
  );
}
