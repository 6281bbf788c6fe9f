import { zodResolver } from '@hookform/resolvers/zod';
import Card from 'react-bootstrap/Card';
import Form from 'react-bootstrap/Form';
import { useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { useNavigate } from 'react-router';
import { bool, loginPassword, operations } from '@ukiyo/contract';
import { paths } from '@/app/paths.ts';
import { PageHeader } from '@/components/page-header.tsx';
import { FormActions } from '@/components/form-actions.tsx';
import { UserIdentityFields } from '@/components/user-identity-fields.tsx';
import { useFormSubmit } from '@/lib/use-form-submit.ts';
import { flash } from '@/lib/flash.ts';
import { grantableMask } from '@/lib/permission-choices.ts';
import { useSession } from '@/lib/session.ts';
import { useAddUser, useOrganizations } from '@/features/member/api/member-api.ts';
import { MemberAccessFields } from './member-access-fields.tsx';
import { useAccountOrganizations } from './use-account-organizations.ts';
import { confirmationMatches } from '@/lib/password-confirmation.ts';

// The operation's own rules, plus what only the form has: the password confirmation, and the
// choice between "every organization" and a list (which then needs at least one entry).
const schema = operations['user.add'].input
  .extend({ confirmation: loginPassword(), restricted: bool() })
  .refine(...confirmationMatches('password'))
  .refine((form) => !form.restricted || (form.user.restriction?.organizationIDs?.length ?? 0) > 0, {
    path: ['user', 'restriction', 'organizationIDs'],
    message: 'validation.required',
  });

const USER_FIELDS: Partial<Record<string, 'user.permission' | 'user.restriction.organizationIDs'>> = {
  permission: 'user.permission',
  'restriction.organizationIDs': 'user.restriction.organizationIDs',
};

export function MemberNewPage() {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const { user: me, organization } = useSession();
  const add = useAddUser();
  const organizations = useAccountOrganizations(useOrganizations(), organization);
  const form = useForm({
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

  const { register, control, setError } = form;
  const { errors } = form.formState;
  // The server's grant and restriction checks name fields without this form's `user.`.
  const setUserError: typeof setError = (name, fieldError, options) =>
    setError((USER_FIELDS[name] ?? name) as Parameters<typeof setError>[0], fieldError, options);
  const submit = useFormSubmit(
    { handleSubmit: form.handleSubmit, setError: setUserError },
    {
      action: 'member',
      send: async ({ user, password, restricted }) => {
        await add.mutateAsync({
          user: {
            ...user,
            restriction: { organizationIDs: restricted ? (user.restriction?.organizationIDs ?? []) : [] },
          },
          password,
        });
        flash.next({
          variant: 'success',
          key: 'member.added',
          params: { email: user.emailAddress },
          action: 'member',
        });
        await navigate(paths.memberIndex());
      },
    },
  );

  return (
    <>
      <PageHeader title={t('title.memberNew')} lead={t('member.newLead')} />
      <Card className="shadow-sm border-0 form-card">
        <Card.Body className="p-4">
          <Form noValidate onSubmit={submit} data-testid="member-form">
            <UserIdentityFields
              idPrefix="member"
              email={register('user.emailAddress')}
              fullName={register('user.fullName')}
              initialPassword={{ password: register('password'), confirmation: register('confirmation') }}
              errors={{ ...errors.user, password: errors.password, confirmation: errors.confirmation }}
            />
            <MemberAccessFields
              control={control}
              names={{
                permission: 'user.permission',
                restricted: 'restricted',
                organizationIDs: 'user.restriction.organizationIDs',
              }}
              grantable={grantableMask(me?.permission ?? 0)}
              organizations={organizations}
            />
            <FormActions
              busy={add.isPending}
              submitLabel={t('member.addSubmit')}
              cancelTo={paths.memberIndex()}
              testIdPrefix="member"
            />
          </Form>
        </Card.Body>
      </Card>
    </>
  );
}
