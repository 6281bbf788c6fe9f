import { useState, type ReactNode } from 'react';
import Button from 'react-bootstrap/Button';
import Card from 'react-bootstrap/Card';
import Col from 'react-bootstrap/Col';
import Form from 'react-bootstrap/Form';
import InputGroup from 'react-bootstrap/InputGroup';
import Row from 'react-bootstrap/Row';
import {
  useFieldArray,
  useForm,
  useFormState,
  useWatch,
  type FieldErrors,
  type Path,
  type UseFormRegister,
  type UseFormReturn,
} from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import {
  generateSigningSecret,
  isAdministrator,
  OriginKind,
  type Invalids,
  type Origin,
} from '@ukiyo/contract';
import { paths } from '@/app/paths.ts';
import { ConfirmModal } from '@/components/confirm-modal.tsx';
import { FieldError } from '@/components/field-error.tsx';
import { FormActions } from '@/components/form-actions.tsx';
import { FieldTable } from '@/components/field-table.tsx';
import { FormField, SelectField } from '@/components/form-field.tsx';
import { applyInvalids } from '@/lib/api-errors.ts';
import { flash } from '@/lib/flash.ts';
import { usePlanFeatures } from '@/lib/plan-features.ts';
import { useSession } from '@/lib/session.ts';
import { changesSigning, checkOriginForm, type OriginFormValues } from '@/features/origin/origin-form.ts';

function Section({ title, lead, children }: { title: string; lead?: string; children: ReactNode }) {
  return (
    <Card className="shadow-sm border-0 mb-4">
      <Card.Body className="p-4">
        <h2 className="h5 mb-1">{title}</h2>
        {lead && <p className="small text-body-secondary">{lead}</p>}
        {children}
      </Card.Body>
    </Card>
  );
}

type OriginFormControl = UseFormReturn<OriginFormValues>;

const SCHEMES = [
  { value: 'https', label: 'https' },
  { value: 'http', label: 'http' },
];

/** A text field of the source, in a column of the source's grid. */
interface SourceTextField {
  name: Path<OriginFormValues>;
  id: string;
  /** Keys of the console's catalogue. */
  label: string;
  md: number;
  placeholder?: string;
  help?: string;
  type?: 'password';
  autoComplete?: string;
}

const HTTP_FIELDS: SourceTextField[] = [
  {
    name: 'http.host',
    id: 'origin-host',
    label: 'origin.host',
    md: 9,
    placeholder: 'images.example.com',
    help: 'origin.hostHelp',
  },
  {
    name: 'http.pathPrefix',
    id: 'origin-http-path-prefix',
    label: 'origin.pathPrefix',
    md: 6,
    placeholder: 'assets/images',
  },
  {
    name: 'http.rewriteHost',
    id: 'origin-rewrite-host',
    label: 'origin.rewriteHost',
    md: 6,
    help: 'origin.rewriteHostHelp',
  },
];

/** An edit keeps the stored secret key when its field is left empty. */
const s3Fields = (updating: boolean): SourceTextField[] => [
  { name: 's3.bucket', id: 'origin-bucket', label: 'origin.bucket', md: 6 },
  { name: 's3.pathPrefix', id: 'origin-s3-path-prefix', label: 'origin.pathPrefix', md: 6 },
  {
    name: 's3.endPoint',
    id: 'origin-endpoint',
    label: 'origin.endPoint',
    md: 6,
    placeholder: 'https://s3.ap-northeast-1.amazonaws.com',
    help: 'origin.endPointHelp',
  },
  { name: 's3.region', id: 'origin-region', label: 'origin.region', md: 6, placeholder: 'ap-northeast-1' },
  {
    name: 's3.accessKeyID',
    id: 'origin-access-key',
    label: 'origin.accessKeyID',
    md: 6,
    autoComplete: 'off',
  },
  {
    name: 's3.secretAccessKey',
    id: 'origin-secret-key',
    label: 'origin.secretAccessKey',
    md: 6,
    type: 'password',
    autoComplete: 'new-password',
    help: updating ? 'origin.secretKeepHelp' : undefined,
  },
];

function SourceTextFields({ form, fields }: { form: OriginFormControl; fields: SourceTextField[] }) {
  const { t } = useTranslation();
  return fields.map(({ md, label, help, ...field }) => (
    <Col key={field.id} md={md}>
      <FormField form={form} label={t(label)} help={help && t(help)} className="" {...field} />
    </Col>
  ));
}

function SourceFields({
  form,
  kind,
  onKind,
  s3Allowed,
  updating,
}: {
  form: OriginFormControl;
  kind: OriginFormValues['kind'];
  onKind: (kind: OriginFormValues['kind']) => void;
  s3Allowed: boolean;
  updating: boolean;
}) {
  const { t } = useTranslation();
  const { errors } = useFormState({ control: form.control, name: 'kind' });
  return (
    <>
      <Form.Group className="mb-3">
        <Form.Label as="div">{t('origin.kind')}</Form.Label>
        <div>
          <Form.Check
            inline
            type="radio"
            id="origin-kind-http"
            label={t('origin.kindHttp')}
            checked={kind === OriginKind.http}
            onChange={() => onKind(OriginKind.http)}
            data-testid="origin-kind-http"
          />
          <Form.Check
            inline
            type="radio"
            id="origin-kind-s3"
            label={t('origin.kindS3')}
            checked={kind === OriginKind.s3}
            disabled={!s3Allowed}
            onChange={() => onKind(OriginKind.s3)}
            data-testid="origin-kind-s3"
          />
        </div>
        {!s3Allowed && <Form.Text>{t('origin.s3NotInPlan')}</Form.Text>}
        <FieldError error={errors.kind} block />
      </Form.Group>
      {kind === OriginKind.http ? (
        <Row className="g-3">
          <Col md={3}>
            <SelectField
              form={form}
              name="http.scheme"
              id="origin-scheme"
              label={t('origin.scheme')}
              options={SCHEMES}
            />
          </Col>
          <SourceTextFields form={form} fields={HTTP_FIELDS} />
        </Row>
      ) : (
        <Row className="g-3">
          <SourceTextFields form={form} fields={s3Fields(updating)} />
        </Row>
      )}
    </>
  );
}

function RulesTable({
  register,
  errors,
  rules,
  onAdd,
  onRemove,
}: {
  register: UseFormRegister<OriginFormValues>;
  errors: FieldErrors<OriginFormValues>;
  rules: { id: string }[];
  onAdd: () => void;
  onRemove: (index: number) => void;
}) {
  const { t } = useTranslation();
  return (
    <>
      {rules.length > 0 && (
        <FieldTable
          testId="origin-rules"
          columns={[
            t('origin.rulePattern'),
            t('origin.rulePath'),
            t('origin.ruleParameter'),
            t('origin.ruleDisallowOverride'),
          ]}
        >
          {rules.map((rule, index) => {
            const error = errors.conversionParameters?.[index];
            return (
              <tr key={rule.id} data-testid="origin-rule">
                {(['pattern', 'path', 'parameter'] as const).map((field) => (
                  <td key={field}>
                    <Form.Control
                      size="sm"
                      aria-label={t(`origin.rule${field[0]!.toUpperCase()}${field.slice(1)}`)}
                      isInvalid={!!error?.[field]}
                      placeholder={field === 'parameter' ? 'w=400,f=webp:auto' : 'thumbs/'}
                      {...register(`conversionParameters.${index}.${field}`)}
                      data-testid={`origin-rule-${field}`}
                    />
                    <FieldError error={error?.[field]} />
                  </td>
                ))}
                <td className="text-center">
                  <Form.Check
                    aria-label={t('origin.ruleDisallowOverride')}
                    {...register(`conversionParameters.${index}.disallowOverride`)}
                    data-testid="origin-rule-disallow"
                  />
                </td>
                <td>
                  <Button
                    variant="outline-danger"
                    size="sm"
                    onClick={() => onRemove(index)}
                    data-testid="origin-rule-remove"
                  >
                    {t('origin.ruleRemove')}
                  </Button>
                </td>
              </tr>
            );
          })}
        </FieldTable>
      )}
      <Button variant="outline-secondary" size="sm" onClick={onAdd} data-testid="origin-rule-add">
        {t('origin.ruleAdd')}
      </Button>
    </>
  );
}

/**
 * Create, copy and edit share this form. `onSave` sends the values and reports failures itself,
 * except refused fields: it returns those (keyed by the form's fields) to be shown here.
 */
export function OriginForm({
  initial,
  previous,
  submitLabel,
  onSave,
}: {
  initial: OriginFormValues;
  /** The origin being edited, or null. */
  previous: Origin | null;
  submitLabel: string;
  onSave: (values: OriginFormValues) => Promise<Invalids | undefined>;
}) {
  const { t } = useTranslation();
  const { user } = useSession();
  const plan = usePlanFeatures();
  const admin = isAdministrator(user?.permission ?? 0);
  const features = plan.data?.features;
  const s3Allowed = admin || !!features?.s3Origins || previous?.kind === OriginKind.s3;
  const customDomainAllowed = admin || !!features?.customDomain || initial.useCustomDomain;
  const [confirming, setConfirming] = useState<OriginFormValues | null>(null);
  const [busy, setBusy] = useState(false);
  const form = useForm<OriginFormValues>({ defaultValues: initial });
  const {
    register,
    control,
    setValue,
    setError,
    handleSubmit,
    formState: { errors },
  } = form;
  const rules = useFieldArray({ control, name: 'conversionParameters' });
  const [kind, useCustomDomain, enableSignedUrl] = useWatch({
    control,
    name: ['kind', 'useCustomDomain', 'enableSignedUrl'],
  });

  const showInvalids = (invalids: Invalids) => {
    applyInvalids(setError, invalids);
    flash.now({ variant: 'danger', key: 'error.invalidInputs', action: 'origin' });
  };

  const save = async (values: OriginFormValues) => {
    setBusy(true);
    try {
      const invalids = await onSave(values);
      if (invalids) showInvalids(invalids);
    } finally {
      setBusy(false);
    }
  };

  const submit = handleSubmit(async (values) => {
    const invalids = checkOriginForm(values, previous);
    if (Object.keys(invalids).length > 0) return showInvalids(invalids);
    if (changesSigning(values, previous)) return setConfirming(values);
    await save(values);
  });

  return (
    <Form noValidate onSubmit={(event) => void submit(event)} data-testid="origin-form">
      <FieldError error={errors.root} block />
      <Section title={t('origin.sourceSection')} lead={t('origin.sourceLead')}>
        <SourceFields
          form={form}
          kind={kind}
          onKind={(value) => setValue('kind', value)}
          s3Allowed={s3Allowed}
          updating={previous !== null}
        />
      </Section>

      <Section title={t('origin.domainSection')} lead={t('origin.domainLead')}>
        {previous && (
          <p className="small">
            {t('origin.generatedName')} <code data-testid="origin-generated-name">{previous.name}</code>
          </p>
        )}
        <Form.Check
          type="switch"
          id="origin-use-custom-domain"
          label={t('origin.useCustomDomain')}
          disabled={!customDomainAllowed}
          {...register('useCustomDomain')}
          data-testid="origin-use-custom-domain"
        />
        {!customDomainAllowed && <Form.Text>{t('origin.customDomainNotInPlan')}</Form.Text>}
        {useCustomDomain && (
          <div className="mt-3">
            <FormField
              form={form}
              name="originName"
              id="origin-custom-domain"
              label={t('origin.customDomain')}
              placeholder="img.example.com"
              help={t('origin.customDomainHelp')}
            />
            <Form.Group controlId="origin-domain-confirmed">
              <Form.Check
                type="checkbox"
                label={t('origin.domainConfirm')}
                isInvalid={!!errors.domainConfirmed}
                {...register('domainConfirmed')}
                data-testid="origin-domain-confirmed"
              />
              <FieldError error={errors.domainConfirmed} block />
            </Form.Group>
          </div>
        )}
      </Section>

      <Section title={t('origin.signingSection')} lead={t('origin.signingLead')}>
        <Form.Check
          type="switch"
          id="origin-enable-signed-url"
          label={t('origin.enableSignedUrl')}
          {...register('enableSignedUrl')}
          data-testid="origin-enable-signed-url"
        />
        {enableSignedUrl && (
          <Form.Group className="mt-3" controlId="origin-signing-secret">
            <Form.Label>{t('origin.signingSecret')}</Form.Label>
            <InputGroup hasValidation>
              <Form.Control
                className="font-monospace"
                autoComplete="off"
                isInvalid={!!errors.signingSecret}
                {...register('signingSecret')}
                data-testid="origin-signing-secret"
              />
              <Button
                variant="outline-secondary"
                onClick={() =>
                  setValue('signingSecret', generateSigningSecret(), {
                    shouldDirty: true,
                    shouldValidate: false,
                  })
                }
                data-testid="origin-generate-secret"
              >
                {t('origin.generateSecret')}
              </Button>
              <FieldError error={errors.signingSecret} />
            </InputGroup>
            <Form.Text>{t('origin.signingSecretHelp')}</Form.Text>
          </Form.Group>
        )}
      </Section>

      <Section title={t('origin.conversionSection')} lead={t('origin.conversionLead')}>
        <Row className="g-3 mb-3">
          <Col md={4}>
            <FormField
              form={form}
              name="defaultCache"
              id="origin-default-cache"
              label={t('origin.defaultCache')}
              inputMode="numeric"
              help={t('origin.defaultCacheHelp')}
              className=""
            />
          </Col>
          <Col md={8}>
            <FormField
              form={form}
              name="overridableParameters"
              id="origin-overridable"
              label={t('origin.overridableParameters')}
              placeholder="w,h,q"
              help={t('origin.overridableHelp')}
              className=""
            />
          </Col>
        </Row>
        {(['enableClientHints', 'allowSvg'] as const).map((setting) => (
          <Form.Group key={setting} className="mb-3" controlId={`origin-${setting}`}>
            <Form.Check
              type="switch"
              label={t(`origin.${setting}`)}
              {...register(setting)}
              data-testid={`origin-${setting}`}
            />
            <Form.Text>{t(`origin.${setting}Help`)}</Form.Text>
          </Form.Group>
        ))}
        <h3 className="h6">{t('origin.rulesTitle')}</h3>
        <p className="small text-body-secondary">{t('origin.rulesLead')}</p>
        <RulesTable
          register={register}
          errors={errors}
          rules={rules.fields}
          onAdd={() => rules.append({ pattern: '', path: '', parameter: '', disallowOverride: false })}
          onRemove={(index) => rules.remove(index)}
        />
      </Section>

      <Section title={t('origin.aclSection')} lead={t('origin.aclLead')}>
        <div className="mb-2">
          {(['deny', 'allow'] as const).map((mode) => (
            <Form.Check
              key={mode}
              inline
              type="radio"
              id={`origin-acl-${mode}`}
              value={mode}
              label={t(`origin.acl.${mode}`)}
              {...register('aclMode')}
              data-testid={`origin-acl-${mode}`}
            />
          ))}
        </div>
        <FormField
          form={form}
          name="aclCidrs"
          id="origin-acl"
          as="textarea"
          rows={4}
          label={t('origin.aclCidrs')}
          placeholder={'203.0.113.0/24\n2001:db8::1'}
          help={t('origin.aclHelp')}
        />
      </Section>

      <Section title={t('origin.descriptionSection')}>
        <FormField
          form={form}
          name="description"
          id="origin-description"
          as="textarea"
          rows={2}
          label={t('origin.description')}
          className=""
        />
      </Section>

      <FormActions
        busy={busy}
        submitLabel={submitLabel}
        cancelTo={paths.originIndex()}
        testIdPrefix="origin"
      />

      <ConfirmModal
        show={confirming !== null}
        title={t('origin.signingConfirmTitle')}
        confirmLabel={t('origin.signingConfirm')}
        variant="primary"
        busy={busy}
        testId="origin-signing"
        onConfirm={() => {
          const values = confirming;
          setConfirming(null);
          if (values) void save(values);
        }}
        onCancel={() => setConfirming(null)}
      >
        <p className="mb-0">{t('origin.signingConfirmBody')}</p>
      </ConfirmModal>
    </Form>
  );
}
