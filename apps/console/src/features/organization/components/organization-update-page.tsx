import { zodResolver } from '@hookform/resolvers/zod';
import type { ReactNode } from 'react';
import Card from 'react-bootstrap/Card';
import Col from 'react-bootstrap/Col';
import Form from 'react-bootstrap/Form';
import Row from 'react-bootstrap/Row';
import { useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { Link, useRevalidator } from 'react-router';
import {
  hasPermission,
  normalisePlan,
  operations,
  Permission,
  PLAN_NAMES,
  type Organization,
} from '@ukiyo/contract';
import { paths } from '@/app/paths.ts';
import { PageHeader } from '@/components/page-header.tsx';
import { SubmitButton } from '@/components/submit-button.tsx';
import { FormField } from '@/components/form-field.tsx';
import { useFormSubmit } from '@/lib/use-form-submit.ts';
import { flash } from '@/lib/flash.ts';
import { useSession } from '@/lib/session.ts';
import { useUpdateOrganization } from '@/features/organization/api/organization-api.ts';
import { WebhookSecretCard } from './webhook-secret-card.tsx';

/** What the organization is, which only administrators change (on the organization register). */
function Facts({ organization }: { organization: Organization }) {
  const { t } = useTranslation();
  const { user } = useSession();
  const canChangePlan = !organization.isLive && hasPermission(user?.permission ?? 0, Permission.organization);
  const facts: [string, ReactNode][] = [
    ['memberCode', organization.sakuraAccount.sakuraMemberCode],
    ['serviceCode', organization.serviceCode],
    ['kind', t(organization.isLive ? 'organization.kindLive' : 'organization.kindImage')],
    [
      'plan',
      <>
        {t(`plan.name.${PLAN_NAMES[normalisePlan(organization.plan)]}`)}
        {canChangePlan && (
          <Link to={paths.plan()} className="ms-2 small" data-testid="organization-plan-link">
            {t('organization.changePlan')}
          </Link>
        )}
      </>,
    ],
  ];
  return (
    <dl className="row mb-0 small" data-testid="organization-facts">
      {facts.map(([key, value]) => (
        <div key={key} className="col-sm-6 col-lg-3 mb-2">
          <dt className="text-body-secondary fw-normal">{t(`organization.${key}`)}</dt>
          <dd className="mb-0 fw-semibold" data-testid={`organization-${key}`}>
            {value}
          </dd>
        </div>
      ))}
    </dl>
  );
}

function OrganizationForm({ organization }: { organization: Organization }) {
  const { t } = useTranslation();
  const revalidator = useRevalidator();
  const update = useUpdateOrganization();
  const form = useForm({
    resolver: zodResolver(operations['organization.update'].input),
    defaultValues: {
      name: organization.name,
      serviceDomain: organization.serviceDomain,
      description: organization.description,
    },
  });
  const submit = useFormSubmit(form, {
    action: 'organization',
    send: async (input) => {
      await update.mutateAsync(input);
      flash.now({ variant: 'success', key: 'organization.updated', action: 'organization' });
      // The navbar and every page read the organization from the session.
      void revalidator.revalidate();
    },
  });

  return (
    <Form noValidate onSubmit={submit} data-testid="organization-form">
      <Row>
        <Col md={6}>
          <FormField form={form} name="name" id="organization-name" label={t('organization.name')} />
        </Col>
        <Col md={6}>
          <FormField
            form={form}
            name="serviceDomain"
            id="organization-service-domain"
            label={t('organization.serviceDomain')}
            placeholder="www.example.com"
            help={t('organization.serviceDomainHelp')}
          />
        </Col>
      </Row>
      <FormField
        form={form}
        name="description"
        id="organization-description"
        label={t('organization.description')}
        as="textarea"
        rows={4}
      />
      <SubmitButton busy={update.isPending} testId="organization-submit">
        {t('common.save')}
      </SubmitButton>
    </Form>
  );
}

export function OrganizationUpdatePage() {
  const { t } = useTranslation();
  const { organization } = useSession();
  if (!organization) return null;
  return (
    <>
      <PageHeader title={t('title.organizationUpdate')} lead={t('organization.lead')} />
      <Card className="shadow-sm border-0 mb-4">
        <Card.Body className="p-4">
          <Facts organization={organization} />
        </Card.Body>
      </Card>
      <Card className="shadow-sm border-0 form-card">
        <Card.Body className="p-4">
          <OrganizationForm key={organization.organizationID} organization={organization} />
        </Card.Body>
      </Card>
      {organization.isLive && <WebhookSecretCard key={organization.organizationID} />}
    </>
  );
}
