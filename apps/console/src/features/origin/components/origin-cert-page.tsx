import Alert from 'react-bootstrap/Alert';
import Card from 'react-bootstrap/Card';
import Form from 'react-bootstrap/Form';
import { useForm, type UseFormReturn } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import {
  hasPermission,
  isAdministrator,
  Permission,
  PLAN_FEATURES,
  PLAN_NAMES,
  PLANS,
  type Origin,
} from '@ukiyo/contract';
import { paths } from '@/app/paths.ts';
import { FieldError } from '@/components/field-error.tsx';
import { FormActions } from '@/components/form-actions.tsx';
import { useBinding } from '@/components/form-field.tsx';
import { PageHeader } from '@/components/page-header.tsx';
import { useReportQueryError } from '@/lib/api-errors.ts';
import { useFormSubmit } from '@/lib/use-form-submit.ts';
import { flash } from '@/lib/flash.ts';
import { formatDateTime } from '@/lib/format.ts';
import { usePlanFeatures } from '@/lib/plan-features.ts';
import { useSession } from '@/lib/session.ts';
import { useUploadCertificate } from '@/features/origin/api/origin-api.ts';
import { hasCustomDomain, tlsState } from '@/features/origin/origin-display.ts';
import { OriginLoader, useOriginParam } from './origin-loader.tsx';
import { TlsBadge } from './tls-badge.tsx';

/** The PEM parts of an upload, in the order the form asks for them. */
const PEM_FIELDS = [
  { name: 'certificate', id: 'origin-cert-certificate', part: 'certificate', required: true },
  { name: 'intermediateCertificate', id: 'origin-cert-intermediate', part: 'intermediate', required: false },
  { name: 'privateKey', id: 'origin-cert-key', part: 'privateKey', required: true },
] as const;

type CertificateForm = Record<(typeof PEM_FIELDS)[number]['name'], string>;

/** A PEM textarea bound to its form, that can also be filled from a file. */
function PemField({
  form,
  name,
  id,
  label,
  help,
  required,
}: {
  form: Pick<UseFormReturn<CertificateForm>, 'register' | 'control' | 'setValue'>;
  name: keyof CertificateForm;
  id: string;
  label: string;
  help: string;
  required: boolean;
}) {
  const { t } = useTranslation();
  const { registration, error } = useBinding({
    form,
    name,
    rules: required ? { required: 'validation.required' } : undefined,
  });
  return (
    <Form.Group className="mb-4" controlId={id}>
      <Form.Label>{label}</Form.Label>
      <Form.Control
        as="textarea"
        rows={6}
        className="font-monospace small"
        spellCheck={false}
        placeholder="-----BEGIN ..."
        isInvalid={!!error}
        {...registration}
        data-testid={id}
      />
      <FieldError error={error} />
      <div className="d-flex flex-wrap align-items-center gap-2 mt-2">
        {/* The browser's own file button speaks the browser's language; this label speaks the console's. */}
        <label className="btn btn-sm btn-outline-secondary mb-0">
          {t('origin.cert.fromFile')}
          <input
            type="file"
            className="visually-hidden"
            accept=".pem,.crt,.cer,.key,text/plain"
            onChange={(event) => {
              const file = event.target.files?.[0];
              if (file) void file.text().then((text) => form.setValue(name, text, { shouldDirty: true }));
            }}
          />
        </label>
        <Form.Text>{help}</Form.Text>
      </div>
    </Form.Group>
  );
}

function CurrentCertificate({ origin }: { origin: Origin }) {
  const { t, i18n } = useTranslation();
  const state = tlsState(origin.tlsCertificate);
  return (
    <Card className="shadow-sm border-0 mb-4" data-testid="origin-cert-current">
      <Card.Body>
        <dl className="row mb-0 small">
          <dt className="col-sm-3">{t('origin.customDomain')}</dt>
          <dd className="col-sm-9">
            <code>{origin.originName}</code>
          </dd>
          <dt className="col-sm-3">{t('origin.tlsLabel')}</dt>
          <dd className="col-sm-9">
            <TlsBadge state={state} />
          </dd>
          {origin.tlsCertificate && (
            <>
              <dt className="col-sm-3">{t('origin.cert.expiresAt')}</dt>
              <dd className="col-sm-9" data-testid="origin-cert-expires">
                {formatDateTime(origin.tlsCertificate.expiresAt, i18n.language)}
              </dd>
              <dt className="col-sm-3">{t('origin.cert.fingerprint')}</dt>
              <dd className="col-sm-9 mb-0">
                <code className="text-break" data-testid="origin-cert-fingerprint">
                  {origin.tlsCertificate.fingerprint}
                </code>
              </dd>
            </>
          )}
        </dl>
      </Card.Body>
    </Card>
  );
}

function CertificateUpload({ origin }: { origin: Origin }) {
  const { t } = useTranslation();
  const upload = useUploadCertificate();
  const form = useForm<CertificateForm>({
    defaultValues: { certificate: '', intermediateCertificate: '', privateKey: '' },
  });
  const submit = useFormSubmit(form, {
    action: 'certificate',
    send: async (values) => {
      await upload.mutateAsync({ originID: origin.originID, ...values });
      flash.now({ variant: 'success', key: 'origin.cert.uploaded', action: 'certificate' });
      // The key is not kept in the page once the server holds it.
      form.reset();
    },
  });

  return (
    <>
      <CurrentCertificate origin={origin} />
      <Card className="shadow-sm border-0">
        <Card.Body className="p-4">
          <p className="small text-body-secondary">{t('origin.cert.lead', { domain: origin.originName })}</p>
          <Form noValidate onSubmit={submit} data-testid="origin-cert-form">
            {PEM_FIELDS.map(({ name, id, part, required }) => (
              <PemField
                key={name}
                form={form}
                name={name}
                id={id}
                label={t(`origin.cert.${part}`)}
                help={t(`origin.cert.${part}Help`)}
                required={required}
              />
            ))}
            <FormActions
              busy={upload.isPending}
              submitLabel={t('origin.cert.submit')}
              cancelLabel={t('origin.backToList')}
              cancelTo={paths.originIndex()}
              testIdPrefix="origin-cert"
            />
          </Form>
        </Card.Body>
      </Card>
    </>
  );
}

/**
 * A plan without custom domains has nothing to upload a certificate for: the page says which
 * plans include them instead of sending the user to a domain field the plan keeps locked.
 */
function PlanWithoutCustomDomains() {
  const { t, i18n } = useTranslation();
  const { user } = useSession();
  const mayChangePlan = hasPermission(user?.permission ?? 0, Permission.organization);
  const plans = new Intl.ListFormat(i18n.language, { type: 'conjunction' }).format(
    PLANS.filter((plan) => PLAN_FEATURES[plan].customDomain).map((plan) =>
      t(`plan.name.${PLAN_NAMES[plan]}`),
    ),
  );
  return (
    <Alert variant="info" data-testid="origin-cert-plan">
      <p className="mb-2">{t('origin.cert.planLimit', { plans })}</p>
      {mayChangePlan ? (
        <Link to={paths.plan()} className="alert-link" data-testid="origin-cert-plan-link">
          {t('origin.cert.planLink')}
        </Link>
      ) : (
        <span className="small">{t('origin.cert.planAskOwner')}</span>
      )}
    </Alert>
  );
}

export function OriginCertPage() {
  const { t } = useTranslation();
  const originID = useOriginParam();
  const { user } = useSession();
  const plan = usePlanFeatures();
  useReportQueryError(plan.error);
  // Administrators are never limited by a plan (console-spec section 6).
  const planLimited = !isAdministrator(user?.permission ?? 0) && plan.data?.features.customDomain === false;
  return (
    <>
      <PageHeader title={t('title.originCert')} />
      <OriginLoader originID={originID}>
        {(origin) =>
          planLimited && !hasCustomDomain(origin) ? (
            <PlanWithoutCustomDomains />
          ) : hasCustomDomain(origin) ? (
            <CertificateUpload origin={origin} />
          ) : (
            <Alert variant="warning" data-testid="origin-cert-invalid">
              {t('error.invalidCertificateOrigin')}{' '}
              <Link to={paths.originUpdate(origin.originID)} className="alert-link">
                {t('origin.cert.setDomain')}
              </Link>
            </Alert>
          )
        }
      </OriginLoader>
    </>
  );
}
