import { zodResolver } from '@hookform/resolvers/zod';
import { useState } from 'react';
import Alert from 'react-bootstrap/Alert';
import Badge from 'react-bootstrap/Badge';
import Card from 'react-bootstrap/Card';
import Col from 'react-bootstrap/Col';
import Form from 'react-bootstrap/Form';
import Row from 'react-bootstrap/Row';
import { useForm, useWatch } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { Link, useNavigate, useSearchParams } from 'react-router';
import {
  ALL_MEMBER_PERMISSIONS,
  ALL_PERMISSIONS,
  loginPassword,
  normalisePlan,
  operations,
  PLAN_NAMES,
  type OperationInput,
  type Operations,
  type Organization,
  type SakuraAccount,
} from '@ukiyo/contract';
import { paths } from '@/app/paths.ts';
import { DataTableCard } from '@/components/data-table-card.tsx';
import { FieldError } from '@/components/field-error.tsx';
import { FormActions } from '@/components/form-actions.tsx';
import { LoadingBlock } from '@/components/loading-block.tsx';
import { PageHeader } from '@/components/page-header.tsx';
import { PermissionField } from '@/components/permission-checkboxes.tsx';
import { SubmitButton } from '@/components/submit-button.tsx';
import { FormField } from '@/components/form-field.tsx';
import { UserIdentityFields } from '@/components/user-identity-fields.tsx';
import { LinkButton } from '@/components/link-button.tsx';
import { useReportQueryError } from '@/lib/api-errors.ts';
import { useFormSubmit } from '@/lib/use-form-submit.ts';
import { flash } from '@/lib/flash.ts';
import { useAdminOrganizations, useRegister, useUpdateOrganization } from '@/features/admin/api/admin-api.ts';
import { OrganizationFields } from './organization-fields.tsx';
import { confirmationMatches } from '@/lib/password-confirmation.ts';

const registerSchema = operations['admin.register'].input
  .extend({ confirmation: loginPassword() })
  .refine(...confirmationMatches('password'));

const emptyRegistration: OperationInput<Operations['admin.register']> & { confirmation: string } = {
  user: { emailAddress: '', fullName: '', permission: ALL_MEMBER_PERMISSIONS },
  organization: {
    name: '',
    serviceCode: '',
    serviceDomain: '',
    plan: 4,
    isLive: false,
    enableTextOverlay: false,
    description: '',
  },
  sakuraAccount: { sakuraAccountID: 0, sakuraMemberCode: '', name: '' },
  password: '',
  confirmation: '',
};

/** The customer accounts the organizations belong to, once each. */
function accountsOf(organizations: readonly Organization[]): SakuraAccount[] {
  const accounts = new Map<number, SakuraAccount>();
  for (const { sakuraAccount } of organizations) accounts.set(sakuraAccount.sakuraAccountID, sakuraAccount);
  return [...accounts.values()].sort((a, b) => a.sakuraMemberCode.localeCompare(b.sakuraMemberCode));
}

function RegisterForm({ organizations }: { organizations: readonly Organization[] }) {
  const { t } = useTranslation();
  const registration = useRegister();
  const accounts = accountsOf(organizations);
  const [existing, setExisting] = useState(false);
  const form = useForm({ resolver: zodResolver(registerSchema), defaultValues: emptyRegistration });
  const { register, control, setValue } = form;
  const { errors } = form.formState;

  // An existing account is named by its ID; its code and name travel along as they are.
  const chooseAccount = (id: number) => {
    const account = accounts.find((candidate) => candidate.sakuraAccountID === id);
    setValue('sakuraAccount.sakuraAccountID', account?.sakuraAccountID ?? 0);
    setValue('sakuraAccount.sakuraMemberCode', account?.sakuraMemberCode ?? '');
    setValue('sakuraAccount.name', account?.name ?? '');
  };
  const chooseKind = (useExisting: boolean) => {
    setExisting(useExisting);
    chooseAccount(useExisting ? (accounts[0]?.sakuraAccountID ?? 0) : 0);
  };

  const submit = useFormSubmit(form, {
    action: 'organization',
    send: async ({ confirmation: _confirmation, ...input }) => {
      const result = await registration.mutateAsync(input);
      flash.now({
        variant: 'success',
        key: 'userCreate.registered',
        params: { organization: result.organization.name, email: result.user.emailAddress },
        action: 'organization',
      });
      form.reset(emptyRegistration);
      setExisting(false);
    },
  });

  const accountID = useWatch({ control, name: 'sakuraAccount.sakuraAccountID' });
  return (
    <Form noValidate onSubmit={submit} data-testid="register-form">
      <fieldset className="mb-4">
        <legend className="h6 border-bottom pb-2 mb-3">{t('userCreate.account')}</legend>
        <div className="d-flex flex-wrap gap-4 mb-3">
          <Form.Check
            type="radio"
            id="register-account-new"
            name="register-account-kind"
            checked={!existing}
            onChange={() => chooseKind(false)}
            label={t('userCreate.accountNew')}
            data-testid="register-account-new"
          />
          <Form.Check
            type="radio"
            id="register-account-existing"
            name="register-account-kind"
            checked={existing}
            disabled={accounts.length === 0}
            onChange={() => chooseKind(true)}
            label={t('userCreate.accountExisting')}
            data-testid="register-account-existing"
          />
        </div>
        {existing ? (
          <Form.Group className="mb-3" controlId="register-account-id">
            <Form.Label>{t('userCreate.accountChoose')}</Form.Label>
            <Form.Select
              value={accountID ?? 0}
              isInvalid={!!errors.sakuraAccount?.sakuraAccountID}
              onChange={(event) => chooseAccount(Number(event.target.value))}
              data-testid="register-account-id"
            >
              {accounts.map((account) => (
                <option key={account.sakuraAccountID} value={account.sakuraAccountID}>
                  {account.sakuraMemberCode} — {account.name}
                </option>
              ))}
            </Form.Select>
            <FieldError error={errors.sakuraAccount?.sakuraAccountID} />
          </Form.Group>
        ) : (
          <Row>
            <Col md={6}>
              <FormField
                form={form}
                name="sakuraAccount.sakuraMemberCode"
                id="register-member-code"
                label={t('userCreate.memberCode')}
              />
            </Col>
            <Col md={6}>
              <FormField
                form={form}
                name="sakuraAccount.name"
                id="register-account-name"
                label={t('userCreate.accountName')}
              />
            </Col>
          </Row>
        )}
      </fieldset>
      <fieldset className="mb-4">
        <legend className="h6 border-bottom pb-2 mb-3">{t('userCreate.organization')}</legend>
        <OrganizationFields form={form} field={(name) => `organization.${name}` as const} prefix="register" />
      </fieldset>
      <fieldset className="mb-4">
        <legend className="h6 border-bottom pb-2 mb-3">{t('userCreate.user')}</legend>
        <UserIdentityFields
          idPrefix="register"
          email={register('user.emailAddress')}
          fullName={register('user.fullName')}
          initialPassword={{ password: register('password'), confirmation: register('confirmation') }}
          errors={{ ...errors.user, password: errors.password, confirmation: errors.confirmation }}
        />
        <div className="form-label">{t('member.permission')}</div>
        <PermissionField
          control={control}
          name="user.permission"
          grantable={ALL_PERMISSIONS}
          testId="register-permission"
        />
        <Form.Text>{t('userCreate.permissionHelp')}</Form.Text>
      </fieldset>
      <SubmitButton busy={registration.isPending} testId="register-submit">
        {t('userCreate.submit')}
      </SubmitButton>
    </Form>
  );
}

function EditOrganizationForm({ organization }: { organization: Organization }) {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const update = useUpdateOrganization();
  const form = useForm({
    resolver: zodResolver(operations['admin.update_organization'].input),
    defaultValues: {
      organization: {
        organizationID: organization.organizationID,
        name: organization.name,
        serviceCode: organization.serviceCode,
        serviceDomain: organization.serviceDomain,
        plan: normalisePlan(organization.plan),
        isLive: organization.isLive,
        enableTextOverlay: organization.enableTextOverlay,
        description: organization.description,
      },
    },
  });
  const submit = useFormSubmit(form, {
    action: 'organization',
    send: async (input) => {
      await update.mutateAsync(input);
      flash.next({
        variant: 'success',
        key: 'userCreate.organizationUpdated',
        params: { name: input.organization.name },
        action: 'organization',
      });
      await navigate(paths.userCreate());
    },
  });

  return (
    <Form noValidate onSubmit={submit} data-testid="organization-edit-form">
      <p className="small text-body-secondary">
        {t('userCreate.editLead', {
          memberCode: organization.sakuraAccount.sakuraMemberCode,
          account: organization.sakuraAccount.name,
        })}
      </p>
      <OrganizationFields
        form={form}
        field={(name) => `organization.${name}` as const}
        prefix="organization-edit"
      />
      <FormActions
        busy={update.isPending}
        submitLabel={t('common.save')}
        cancelTo={paths.userCreate()}
        testIdPrefix="organization-edit"
        className="d-flex gap-2"
      />
    </Form>
  );
}

function OrganizationRow({ organization, editing }: { organization: Organization; editing: boolean }) {
  const { t } = useTranslation();
  return (
    <tr
      className={editing ? 'table-active' : undefined}
      data-testid="organization-row"
      data-organization-id={organization.organizationID}
      data-service-code={organization.serviceCode}
    >
      <td>
        <div>{organization.sakuraAccount.sakuraMemberCode}</div>
        <div className="small text-body-secondary">{organization.sakuraAccount.name}</div>
      </td>
      <td>
        <div>{organization.name}</div>
        {organization.serviceDomain && (
          <div className="small text-body-secondary">{organization.serviceDomain}</div>
        )}
      </td>
      <td>
        <code>{organization.serviceCode}</code>
      </td>
      <td>
        <Badge bg={organization.isLive ? 'info' : 'secondary'}>
          {t(organization.isLive ? 'organization.kindLive' : 'organization.kindImage')}
        </Badge>
      </td>
      <td>{t(`plan.name.${PLAN_NAMES[normalisePlan(organization.plan)]}`)}</td>
      <td className="text-end">
        <LinkButton
          to={paths.userCreate({ organization: organization.organizationID })}
          variant="outline-primary"
          size="sm"
          testId="organization-edit"
        >
          {t('common.edit')}
        </LinkButton>
      </td>
    </tr>
  );
}

export function UserCreatePage() {
  const { t } = useTranslation();
  const [search] = useSearchParams();
  const query = useAdminOrganizations();
  useReportQueryError(query.error);
  const organizations = query.data?.organizations ?? [];
  const editID = search.has('organization') ? Number(search.get('organization')) : null;
  const editing = editID === null ? undefined : organizations.find((o) => o.organizationID === editID);

  return (
    <>
      <PageHeader title={t('title.userCreate')} lead={t('userCreate.lead')} />
      <Card className="shadow-sm border-0 mb-4 form-card">
        <Card.Header className="bg-body py-3">
          <h2 className="h6 mb-0">
            {editID === null
              ? t('userCreate.createTitle')
              : t('userCreate.editTitle', { name: editing?.name ?? '' })}
          </h2>
        </Card.Header>
        <Card.Body className="p-4">
          {query.isPending ? (
            <LoadingBlock />
          ) : editID === null ? (
            <RegisterForm organizations={organizations} />
          ) : editing ? (
            <EditOrganizationForm key={editing.organizationID} organization={editing} />
          ) : (
            <Alert variant="secondary" className="mb-0" data-testid="organization-edit-not-found">
              {t('userCreate.organizationNotFound')}{' '}
              <Link to={paths.userCreate()}>{t('userCreate.backToCreate')}</Link>
            </Alert>
          )}
        </Card.Body>
      </Card>
      <DataTableCard
        query={query}
        rowCount={organizations.length}
        testId="organization-table"
        empty={t('userCreate.noOrganization')}
        header={
          <Card.Header className="bg-body py-3 d-flex justify-content-between align-items-center">
            <h2 className="h6 mb-0">{t('userCreate.organizations')}</h2>
            <span className="small text-body-secondary">
              {t('userCreate.organizationCount', { count: organizations.length })}
            </span>
          </Card.Header>
        }
        columns={[
          t('userCreate.memberCode'),
          t('userCreate.organizationName'),
          t('userCreate.serviceCode'),
          t('userCreate.kind'),
          t('userCreate.plan'),
        ]}
        actions
      >
        {organizations.map((organization) => (
          <OrganizationRow
            key={organization.organizationID}
            organization={organization}
            editing={organization.organizationID === editID}
          />
        ))}
      </DataTableCard>
    </>
  );
}
