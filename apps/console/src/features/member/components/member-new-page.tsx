import { zodResolver } from '@hookform/resolvers/zod';
import Card from 'react-bootstrap/Card';
import Col from 'react-bootstrap/Col';
import Form from 'react-bootstrap/Form';
import Row from 'react-bootstrap/Row';
import { Controller, useController, useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { Link, useNavigate } from 'react-router';
import { bool, loginPassword, operations } from '@ukiyo/contract';
import { paths } from '../../../app/routes.ts';
import { FieldError } from '../../../components/field-error.tsx';
import { PageHeader } from '../../../components/page-header.tsx';
import { PermissionCheckboxes } from '../../../components/permission-checkboxes.tsx';
import { SubmitButton } from '../../../components/submit-button.tsx';
import { TextField } from '../../../components/text-field.tsx';
import { useApiErrorHandler } from '../../../lib/api-errors.ts';
import { flash } from '../../../lib/flash.ts';
import { grantableMask } from '../../../lib/permission-choices.ts';
import { useSession } from '../../../lib/session.ts';
import { useAddUser, useOrganizations } from '../api/member-api.ts';
import { RestrictionField } from './restriction-field.tsx';
import { useAccountOrganizations } from './use-account-organizations.ts';

// The operation's own rules, plus what only the form has: the password confirmation, and the
// choice between "every organization" and a list (which then needs at least one entry).
const schema = operations['user.add'].input
  .extend({ confirmation: loginPassword(), restricted: bool() })
  .refine((form) => form.password === form.confirmation, {
    path: ['confirmation'],
    message: 'validation.notMatch',
  })
  .refine((form) => !form.restricted || (form.user.restriction?.organizationIDs?.length ?? 0) > 0, {
    path: ['user', 'restriction', 'organizationIDs'],
    message: 'validation.required',
  });

/** Fields the server's grant and restriction checks name without the `user.` of this form. */
const USER_FIELDS: Partial<Record<string, 'user.permission' | 'user.restriction.organizationIDs'>> = {
  permission: 'user.permission',
  'restriction.organizationIDs': 'user.restriction.organizationIDs',
};

export function MemberNewPage() {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const handleError = useApiErrorHandler();
  const { user: me, organization } = useSession();
  const add = useAddUser();
  const organizations = useAccountOrganizations(useOrganizations(), organization);
  const {
    register,
    control,
    handleSubmit,
    setError,
    formState: { errors },
  } = useForm({
    resolver: zodResolver(schema),
    defaultValues: {
      user: {
        emailAddress: '',
        fullName: '',
        permission: 0,
        // As the server does without a restriction: the new member reaches this organization.
        restriction: { organizationIDs: organization ? [organization.organizationID] : [] },
      },
      password: '',
      confirmation: '',
      restricted: true,
    },
  });

  const submit = handleSubmit(async ({ user, password, restricted }) => {
    try {
      await add.mutateAsync({
        user: {
          ...user,
          restriction: { organizationIDs: restricted ? (user.restriction?.organizationIDs ?? []) : [] },
        },
        password,
      });
      flash.next({ variant: 'success', key: 'member.added', params: { email: user.emailAddress } });
      await navigate(paths.memberIndex());
    } catch (error) {
      handleError(error, {
        setError: (name, fieldError, options) =>
          setError((USER_FIELDS[name] ?? name) as Parameters<typeof setError>[0], fieldError, options),
      });
    }
  });

  const { field: restricted } = useController({ control, name: 'restricted' });
  const { field: organizationIDs } = useController({ control, name: 'user.restriction.organizationIDs' });
  return (
    <>
      <PageHeader title={t('title.memberNew')} lead={t('member.newLead')} />
      <Card className="shadow-sm border-0 form-card">
        <Card.Body className="p-4">
          <Form noValidate onSubmit={(event) => void submit(event)} data-testid="member-form">
            <Row>
              <Col md={6}>
                <TextField
                  id="member-email"
                  label={t('member.emailAddress')}
                  type="email"
                  autoComplete="off"
                  registration={register('user.emailAddress')}
                  error={errors.user?.emailAddress}
                />
              </Col>
              <Col md={6}>
                <TextField
                  id="member-full-name"
                  label={t('member.fullName')}
                  autoComplete="off"
                  registration={register('user.fullName')}
                  error={errors.user?.fullName}
                />
              </Col>
              <Col md={6}>
                <TextField
                  id="member-password"
                  label={t('member.initialPassword')}
                  type="password"
                  autoComplete="new-password"
                  registration={register('password')}
                  error={errors.password}
                  help={t('member.initialPasswordHelp')}
                />
              </Col>
              <Col md={6}>
                <TextField
                  id="member-password-confirmation"
                  label={t('member.passwordConfirmation')}
                  type="password"
                  autoComplete="new-password"
                  registration={register('confirmation')}
                  error={errors.confirmation}
                />
              </Col>
            </Row>
            <fieldset className="mb-3">
              <legend className="form-label fs-6">{t('member.permission')}</legend>
              <Controller
                control={control}
                name="user.permission"
                render={({ field }) => (
                  <PermissionCheckboxes
                    value={field.value}
                    onChange={field.onChange}
                    grantable={grantableMask(me?.permission ?? 0)}
                    testId="member-permission"
                    invalid={!!errors.user?.permission}
                  />
                )}
              />
              <FieldError error={errors.user?.permission} block />
            </fieldset>
            <RestrictionField
              restricted={restricted.value}
              onRestrictedChange={restricted.onChange}
              organizationIDs={organizationIDs.value ?? []}
              onOrganizationIDsChange={organizationIDs.onChange}
              organizations={organizations}
              error={restricted.value ? errors.user?.restriction?.organizationIDs?.message : undefined}
            />
            <div className="d-flex gap-2 mt-4">
              <SubmitButton busy={add.isPending} testId="member-submit">
                {t('member.addSubmit')}
              </SubmitButton>
              <Link
                to={paths.memberIndex()}
                className="btn btn-outline-secondary"
                data-testid="member-cancel"
              >
                {t('common.cancel')}
              </Link>
            </div>
          </Form>
        </Card.Body>
      </Card>
    </>
  );
}
