import Col from 'react-bootstrap/Col';
import Form from 'react-bootstrap/Form';
import Row from 'react-bootstrap/Row';
import type { FieldError as HookFieldError, UseFormRegisterReturn } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { PLAN_NAMES, type PlanNumber } from '@ukiyo/contract';
import { FieldError } from '@/components/field-error.tsx';
import { TextField } from '@/components/text-field.tsx';

export type OrganizationFieldName =
  'name' | 'serviceCode' | 'serviceDomain' | 'plan' | 'isLive' | 'enableTextOverlay' | 'description';

/** Registers one `organization.*` field of the form that holds these fields. */
export type RegisterOrganizationField = (
  name: OrganizationFieldName,
  options?: { valueAsNumber: true },
) => UseFormRegisterReturn;

const PLANS: readonly PlanNumber[] = [1, 2, 3, 4];

export function OrganizationFields({
  register,
  errors,
  prefix,
}: {
  register: RegisterOrganizationField;
  errors: Partial<Record<OrganizationFieldName, HookFieldError>> | undefined;
  /** Test ID prefix: 'register' or 'organization-edit'. */
  prefix: string;
}) {
  const { t } = useTranslation();
  return (
    <>
      <Row>
        <Col md={6}>
          <TextField
            id={`${prefix}-organization-name`}
            label={t('userCreate.organizationName')}
            registration={register('name')}
            error={errors?.name}
          />
        </Col>
        <Col md={6}>
          <TextField
            id={`${prefix}-service-code`}
            label={t('userCreate.serviceCode')}
            registration={register('serviceCode')}
            error={errors?.serviceCode}
          />
        </Col>
        <Col md={6}>
          <TextField
            id={`${prefix}-service-domain`}
            label={t('organization.serviceDomain')}
            placeholder="www.example.com"
            registration={register('serviceDomain')}
            error={errors?.serviceDomain}
          />
        </Col>
        <Col md={6}>
          <Form.Group className="mb-3" controlId={`${prefix}-plan`}>
            <Form.Label>{t('userCreate.plan')}</Form.Label>
            <Form.Select
              isInvalid={!!errors?.plan}
              data-testid={`${prefix}-plan`}
              {...register('plan', { valueAsNumber: true })}
            >
              {PLANS.map((plan) => (
                <option key={plan} value={plan}>
                  {t(`plan.name.${PLAN_NAMES[plan]}`)}
                </option>
              ))}
            </Form.Select>
            <FieldError error={errors?.plan} />
          </Form.Group>
        </Col>
      </Row>
      <div className="d-flex flex-wrap gap-4 mb-3">
        <Form.Check
          type="switch"
          id={`${prefix}-is-live`}
          label={t('userCreate.isLive')}
          data-testid={`${prefix}-is-live`}
          {...register('isLive')}
        />
        <Form.Check
          type="switch"
          id={`${prefix}-text-overlay`}
          label={t('userCreate.enableTextOverlay')}
          data-testid={`${prefix}-text-overlay`}
          {...register('enableTextOverlay')}
        />
      </div>
      <TextField
        id={`${prefix}-description`}
        label={t('organization.description')}
        as="textarea"
        rows={3}
        registration={register('description')}
        error={errors?.description}
      />
    </>
  );
}
