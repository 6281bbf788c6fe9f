import { zodResolver } from '@hookform/resolvers/zod';
import { useState } from 'react';
import Alert from 'react-bootstrap/Alert';
import Badge from 'react-bootstrap/Badge';
import Button from 'react-bootstrap/Button';
import Card from 'react-bootstrap/Card';
import Form from 'react-bootstrap/Form';
import { useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { Link, useNavigate, useParams } from 'react-router';
import { bool, isAdministrator, operations, type User } from '@ukiyo/contract';
import { paths } from '@/app/paths.ts';
import { MemberDisableConfirm } from './member-disable-confirm.tsx';
import { LoadingBlock } from '@/components/loading-block.tsx';
import { PageHeader } from '@/components/page-header.tsx';
import { FormActions } from '@/components/form-actions.tsx';
import { UserIdentityFields } from '@/components/user-identity-fields.tsx';
import { useRecordNotFound } from '@/lib/api-errors.ts';
import { flash } from '@/lib/flash.ts';
import { formatDateTime } from '@/lib/format.ts';
import { useFormSubmit } from '@/lib/use-form-submit.ts';
import { grantableMask } from '@/lib/permission-choices.ts';
import { useSession } from '@/lib/session.ts';
import { useOrganizations, useUpdateUser, useUser } from '@/features/member/api/member-api.ts';
import { MemberAccessFields } from './member-access-fields.tsx';
import { useAccountOrganizations } from './use-account-organizations.ts';
import { useToggleEnabled } from './use-toggle-enabled.ts';
import { EnabledBadge } from '@/components/enabled-badge.tsx';

const schema = operations['user.update'].input
  .omit({ oldEmailAddress: true, password: true })
  .extend({ restricted: bool() })
  .refine((form) => !form.restricted || (form.restriction?.organizationIDs?.length ?? 0) > 0, {
    path: ['restriction', 'organizationIDs'],
    message: 'validation.required',
  });

function StatusCard({ user, self }: { user: User; self: boolean }) {
  const { t, i18n } = useTranslation();
  const { toggle: toggleEnabled, pending } = useToggleEnabled();
  const [confirming, setConfirming] = useState(false);
  const toggle = async () => {
    await toggleEnabled(user);
    setConfirming(false);
  };
  return (
    <Card className="shadow-sm border-0 mb-4">
      <Card.Body className="d-flex flex-wrap align-items-center justify-content-between gap-3">
        <div>
          <div className="small text-body-secondary">{t('member.status')}</div>
          <EnabledBadge enabled={user.enabled} testId="member-enabled" className="me-2" />
          {user.activatedAt ? (
            <span className="small text-body-secondary">
              {t('member.activatedOn', { date: formatDateTime(user.activatedAt, i18n.language) })}
            </span>
          ) : (
            <Badge bg="warning" text="dark">
              {t('member.notActivated')}
            </Badge>
          )}
        </div>
        {!self && (
          <Button
            variant={user.enabled ? 'outline-danger' : 'outline-success'}
            disabled={pending}
            // Disabling ends the member's sessions at once: it asks first; enabling does not.
            onClick={() => (user.enabled ? setConfirming(true) : void toggle())}
            data-testid="member-toggle-enabled"
          >
            {t(user.enabled ? 'common.disable' : 'common.enable')}
          </Button>
        )}
      </Card.Body>
      <MemberDisableConfirm
        email={confirming ? user.emailAddress : null}
        busy={pending}
        onConfirm={() => void toggle()}
        onCancel={() => setConfirming(false)}
      />
    </Card>
  );
}

function MemberUpdateForm({ user }: { user: User }) {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const { user: me, organization } = useSession();
  const update = useUpdateUser();
  const self = me?.userID === user.userID;
  const admin = isAdministrator(me?.permission ?? 0);
  // A member cannot widen their own restriction; the server refuses it.
  const canRestrict = !self || admin;
  const organizations = useAccountOrganizations(useOrganizations(), organization);
  const form = useForm({
    resolver: zodResolver(schema),
    defaultValues: {
      emailAddress: user.emailAddress,
      fullName: user.fullName,
      permission: user.permission,
      restriction: { organizationIDs: user.restriction.organizationIDs },
      restricted: user.restriction.organizationIDs.length > 0,
    },
  });
  const { register, control } = form;
  const { errors } = form.formState;

  const submit = useFormSubmit(form, {
    action: 'member',
    send: async ({ emailAddress, fullName, permission, restriction, restricted }) => {
      await update.mutateAsync({
        oldEmailAddress: user.emailAddress,
        emailAddress,
        fullName,
        permission,
        ...(canRestrict
          ? { restriction: { organizationIDs: restricted ? (restriction?.organizationIDs ?? []) : [] } }
          : {}),
      });
      flash.next({
        variant: 'success',
        key: 'member.updated',
        params: { email: emailAddress },
        action: 'member',
      });
      await navigate(paths.memberIndex());
    },
  });

  return (
    <Card className="shadow-sm border-0 form-card">
      <Card.Body className="p-4">
        <Form noValidate onSubmit={submit} data-testid="member-form">
          <UserIdentityFields
            idPrefix="member"
            email={register('emailAddress')}
            fullName={register('fullName')}
            errors={errors}
            emailDisabled={self}
            emailHelp={
              self && (
                <>
                  {t('member.ownEmailHelp')} <Link to={paths.userUpdate()}>{t('nav.userUpdate')}</Link>
                </>
              )
            }
          />
          <MemberAccessFields
            control={control}
            names={{
              permission: 'permission',
              restricted: 'restricted',
              organizationIDs: 'restriction.organizationIDs',
            }}
            grantable={grantableMask(me?.permission ?? 0, self ? user.permission : undefined)}
            permissionNote={
              self && <p className="small text-body-secondary">{t('member.ownPermissionHelp')}</p>
            }
            organizations={canRestrict ? organizations : null}
          />
          <FormActions
            busy={update.isPending}
            submitLabel={t('common.save')}
            cancelTo={paths.memberIndex()}
            testIdPrefix="member"
          />
        </Form>
      </Card.Body>
    </Card>
  );
}

export function MemberUpdatePage() {
  const { t } = useTranslation();
  const { id } = useParams();
  const { user: me } = useSession();
  const userID = Number(id);
  const query = useUser(userID);
  const notFound = useRecordNotFound(userID, query);
  const user = query.data?.user;
  return (
    <>
      <PageHeader title={t('title.memberUpdate')} lead={user?.emailAddress} />
      {notFound ? (
        <Alert variant="secondary" data-testid="member-not-found">
          {t('member.notFound')} <Link to={paths.memberIndex()}>{t('member.backToList')}</Link>
        </Alert>
      ) : !user ? (
        // Any other failure is in the flash bar: no spinner left turning under it.
        query.isPending && <LoadingBlock />
      ) : (
        <>
          <StatusCard user={user} self={user.userID === me?.userID} />
          {/* Keyed by the loaded user: a refetch after saving starts the form from the new values. */}
          <MemberUpdateForm key={`${user.userID}:${user.emailAddress}`} user={user} />
        </>
      )}
    </>
  );
}
