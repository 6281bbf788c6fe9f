import type { ReactNode } from 'react';
import { zodResolver } from '@hookform/resolvers/zod';
import Accordion from 'react-bootstrap/Accordion';
import Card from 'react-bootstrap/Card';
import Form from 'react-bootstrap/Form';
import { useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { Link, useSearchParams } from 'react-router';
import { operations, PLAN_NAMES } from '@ukiyo/contract';
import { paths } from '@/app/paths.ts';
import { FieldError } from '@/components/field-error.tsx';
import { PageHeader } from '@/components/page-header.tsx';
import { SubmitButton } from '@/components/submit-button.tsx';
import { FormField, SelectField } from '@/components/form-field.tsx';
import { applyInvalids, classifyApiError, useApiErrorHandler } from '@/lib/api-errors.ts';
import { flash } from '@/lib/flash.ts';
import { useSession } from '@/lib/session.ts';
import { useSendHelpRequest } from '@/features/help/api/help-api.ts';
import { HELP_CONTACT_ID, helpSubjectOf } from '@/features/help/help-subject.ts';
import { FAQ, FAQ_TOPICS } from './faq.ts';

export const HELP_SERVICES = ['image', 'live', 'console', 'other'] as const;
export const HELP_CATEGORIES = ['usage', 'trouble', 'billing', 'plan', 'feature', 'other'] as const;

const schema = operations['user.mail'].input;

function Questions() {
  const { t, i18n } = useTranslation();
  const language = i18n.language === 'en' ? 'en' : 'ja';
  return (
    <section className="mb-5" data-testid="help-faq">
      <h2 className="h5 mb-3">{t('help.faqTitle')}</h2>
      {FAQ_TOPICS.map((topic) => (
        <div key={topic} className="mb-3">
          <h3 className="h6 text-body-secondary mb-2">{t(`help.topic.${topic}`)}</h3>
          <Accordion alwaysOpen>
            {FAQ.filter((item) => item.topic === topic).map((item) => (
              <Accordion.Item key={item.id} eventKey={item.id} data-testid="help-faq-item">
                <Accordion.Header as="h4">{item.question[language]}</Accordion.Header>
                <Accordion.Body className="small">
                  <p className="mb-0">{item.answer[language]}</p>
                  {item.docs && (
                    <p className="mb-0 mt-2">
                      <Link to={paths.docs(item.docs)}>{t('help.readDocs')}</Link>
                    </p>
                  )}
                </Accordion.Body>
              </Accordion.Item>
            ))}
          </Accordion>
        </div>
      ))}
    </section>
  );
}

/** A field's label with the mark of a required field. */
function Required({ children }: { children: ReactNode }) {
  return (
    <>
      {children}
      <span className="text-danger ms-1">*</span>
    </>
  );
}

function ContactForm() {
  const { t } = useTranslation();
  const handleError = useApiErrorHandler();
  const { user, organization } = useSession();
  const send = useSendHelpRequest();
  const [query] = useSearchParams();
  // A page that sent the user here about something (the plan page's contact-sales action).
  const subject = helpSubjectOf(query);
  const defaults = {
    service: organization?.isLive ? 'live' : 'image',
    category: '',
    company: '',
    name: user?.fullName ?? '',
    emailAddress: user?.emailAddress ?? '',
    message: '',
    agreement: false as unknown as true,
  };
  const form = useForm({
    resolver: zodResolver(schema),
    defaultValues: subject
      ? {
          ...defaults,
          category: 'plan',
          message: t('help.prefill.plan', { plan: t(`plan.name.${PLAN_NAMES[subject.plan]}`) }),
        }
      : defaults,
  });

  const submit = form.handleSubmit(
    // Each outcome names the 'help' action: it replaces the form's earlier one (flash.ts).
    async (input) => {
      try {
        await send.mutateAsync(input);
        flash.now({ variant: 'success', key: 'help.sent', action: 'help' });
        form.reset({
          ...defaults,
          name: input.name,
          emailAddress: input.emailAddress,
          company: input.company,
        });
      } catch (error) {
        const failure = classifyApiError(error);
        if (failure.kind === 'validation') {
          applyInvalids(form.setError, failure.invalids);
          flash.now({ variant: 'danger', key: 'help.fillRequired', action: 'help' });
        } else if (failure.kind === 'message' && failure.key === 'error.tooManyAttempts') {
          handleError(error, { action: 'help' });
        } else if (failure.kind === 'message' || failure.kind === 'internal') {
          flash.now({ variant: 'danger', key: 'help.failed', action: 'help' });
        } else {
          handleError(error, { action: 'help' });
        }
      }
    },
    () => flash.now({ variant: 'danger', key: 'help.fillRequired', action: 'help' }),
  );

  return (
    <section id={HELP_CONTACT_ID} data-testid="help-contact">
      <h2 className="h5 mb-3">{t('help.contactTitle')}</h2>
      <Card className="shadow-sm border-0 form-card">
        <Card.Body className="p-4">
          <p className="small text-body-secondary">{t('help.contactLead')}</p>
          <Form noValidate onSubmit={(event) => void submit(event)} data-testid="help-form">
            <div className="row g-3 mb-3">
              <SelectField
                form={form}
                name="service"
                id="help-service"
                label={<Required>{t('help.service')}</Required>}
                className="col-sm-6"
                options={HELP_SERVICES.map((service) => ({
                  value: service,
                  label: t(`help.service.${service}`),
                }))}
              />
              <SelectField
                form={form}
                name="category"
                id="help-category"
                label={<Required>{t('help.category')}</Required>}
                className="col-sm-6"
                choose={t('help.choose')}
                options={HELP_CATEGORIES.map((category) => ({
                  value: category,
                  label: t(`help.category.${category}`),
                }))}
              />
            </div>
            <FormField
              form={form}
              name="company"
              id="help-company"
              label={t('help.company')}
              autoComplete="organization"
            />
            <div className="row g-3">
              <div className="col-sm-6">
                <FormField
                  form={form}
                  name="name"
                  id="help-name"
                  label={<Required>{t('help.name')}</Required>}
                  autoComplete="name"
                />
              </div>
              <div className="col-sm-6">
                <FormField
                  form={form}
                  name="emailAddress"
                  id="help-email"
                  type="email"
                  label={<Required>{t('help.emailAddress')}</Required>}
                  autoComplete="email"
                />
              </div>
            </div>
            <FormField
              form={form}
              name="message"
              id="help-message"
              as="textarea"
              rows={7}
              label={<Required>{t('help.message')}</Required>}
              help={t('help.messageHelp')}
            />
            <div className="border rounded p-3 mb-3 small bg-body-tertiary" data-testid="help-privacy">
              <p className="fw-semibold mb-1">{t('help.privacyTitle')}</p>
              <p className="mb-0">{t('help.privacyText')}</p>
            </div>
            <Form.Group controlId="help-agreement" className="mb-3">
              <Form.Check
                type="checkbox"
                isInvalid={!!form.formState.errors.agreement}
                label={<Required>{t('help.agreement')}</Required>}
                data-testid="help-agreement"
                {...form.register('agreement')}
              />
              <FieldError error={form.formState.errors.agreement} block />
            </Form.Group>
            <SubmitButton busy={send.isPending} testId="help-submit">
              {t('help.submit')}
            </SubmitButton>
          </Form>
        </Card.Body>
      </Card>
    </section>
  );
}

export function HelpPage() {
  const { t } = useTranslation();
  return (
    <>
      <PageHeader
        title={t('title.help')}
        lead={
          <>
            {t('help.lead')} <Link to={paths.docs()}>{t('help.docsLink')}</Link>
          </>
        }
      />
      <div className="row g-4">
        <div className="col-xl-6">
          <Questions />
        </div>
        <div className="col-xl-6">
          <ContactForm />
        </div>
      </div>
    </>
  );
}
