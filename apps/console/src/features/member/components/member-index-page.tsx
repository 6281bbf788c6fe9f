import Badge from 'react-bootstrap/Badge';
import Button from 'react-bootstrap/Button';
import { useTranslation } from 'react-i18next';
import type { User } from '@ukiyo/contract';
import { paths } from '@/app/paths.ts';
import { ConfirmModal } from '@/components/confirm-modal.tsx';
import { useConfirmation } from '@/lib/use-confirmation.ts';
import { MemberDisableConfirm } from './member-disable-confirm.tsx';
import { DataTableCard } from '@/components/data-table-card.tsx';
import { PageHeader } from '@/components/page-header.tsx';
import { LinkButton } from '@/components/link-button.tsx';
import { classifyApiError, useApiErrorHandler, useReportQueryError } from '@/lib/api-errors.ts';
import { flash } from '@/lib/flash.ts';
import { formatDateTime } from '@/lib/format.ts';
import { useSession } from '@/lib/session.ts';
import { usePlanFeatures } from '@/lib/plan-features.ts';
import { useDeleteUser, useUsers } from '@/features/member/api/member-api.ts';
import { useToggleEnabled } from './use-toggle-enabled.ts';
import { PermissionBadges } from './permission-badges.tsx';
import { EnabledBadge } from '@/components/enabled-badge.tsx';

function MemberRow({
  user,
  self,
  busy,
  onToggle,
  onDelete,
}: {
  user: User;
  self: boolean;
  busy: boolean;
  onToggle: () => void;
  onDelete: () => void;
}) {
  const { t, i18n } = useTranslation();
  return (
    <tr data-testid="member-row" data-email={user.emailAddress} data-user-id={user.userID}>
      <td>
        {user.emailAddress}
        {self && (
          <Badge bg="info" className="ms-2" data-testid="member-self">
            {t('member.you')}
          </Badge>
        )}
      </td>
      <td>{user.fullName}</td>
      <td>
        <PermissionBadges mask={user.permission} />
      </td>
      <td>
        <EnabledBadge enabled={user.enabled} testId="member-enabled" />
      </td>
      <td className="text-nowrap small" data-testid="member-activated">
        {user.activatedAt ? (
          formatDateTime(user.activatedAt, i18n.language)
        ) : (
          <Badge bg="warning" text="dark">
            {t('member.notActivated')}
          </Badge>
        )}
      </td>
      <td className="text-end text-nowrap">
        <LinkButton
          to={paths.memberUpdate(user.userID)}
          variant="outline-primary"
          size="sm"
          testId="member-edit"
        >
          {t('common.edit')}
        </LinkButton>
        {/* One's own account is changed on the edit page or the account settings, not from here. */}
        {!self && (
          <>
            <Button
              variant="outline-secondary"
              size="sm"
              className="ms-2"
              disabled={busy}
              onClick={onToggle}
              data-testid="member-toggle-enabled"
            >
              {t(user.enabled ? 'common.disable' : 'common.enable')}
            </Button>
            <Button
              variant="outline-danger"
              size="sm"
              className="ms-2"
              disabled={busy}
              onClick={onDelete}
              data-testid="member-delete"
            >
              {t('common.delete')}
            </Button>
          </>
        )}
      </td>
    </tr>
  );
}

export function MemberIndexPage() {
  const { t } = useTranslation();
  const handleError = useApiErrorHandler();
  const { user: me } = useSession();
  const users = useUsers();
  const plan = usePlanFeatures();
  const { toggle, pending: toggling, pendingEmail } = useToggleEnabled();
  const remove = useDeleteUser();
  const deleting = useConfirmation<User>();
  const disabling = useConfirmation<User>();
  useReportQueryError(users.error);

  const confirmDisable = () => disabling.confirm(toggle);

  const confirmDelete = () =>
    deleting.confirm(async ({ userID, emailAddress }) => {
      try {
        await remove.mutateAsync({ userID });
        flash.now({
          variant: 'success',
          key: 'member.deleted',
          params: { email: emailAddress },
          action: 'member',
        });
      } catch (error) {
        const failure = classifyApiError(error);
        // The last full-permission member says why; other refusals are the spec's general failure.
        const explained = failure.kind !== 'message' || failure.key === 'error.lastFullPermissionUser';
        if (explained) handleError(error, { action: 'member' });
        else flash.now({ variant: 'danger', key: 'error.userDeleteFailed', action: 'member' });
      }
    });

  const list = users.data?.users ?? [];
  const limit = plan.data?.features.userLimit;
  return (
    <>
      <PageHeader
        title={t('title.memberIndex')}
        lead={
          users.isSuccess &&
          (limit === null || limit === undefined
            ? t('member.count', { count: list.length })
            : t('member.countWithLimit', { count: list.length, limit }))
        }
        actions={
          <LinkButton to={paths.memberNew()} variant="primary" testId="member-new">
            {t('member.add')}
          </LinkButton>
        }
      />
      <DataTableCard
        query={users}
        rowCount={list.length}
        testId="member-table"
        empty={t('member.empty')}
        emptyTestId="member-empty"
        columns={[
          t('member.emailAddress'),
          t('member.fullName'),
          t('member.permission'),
          t('member.status'),
          t('member.activatedAt'),
        ]}
        actions
      >
        {list.map((user) => (
          <MemberRow
            key={user.userID}
            user={user}
            self={user.userID === me?.userID}
            busy={
              (toggling && pendingEmail === user.emailAddress) ||
              (remove.isPending && remove.variables?.userID === user.userID)
            }
            // Disabling ends the member's sessions at once: it asks first; enabling does not.
            onToggle={() => (user.enabled ? disabling.ask(user) : void toggle(user))}
            onDelete={() => deleting.ask(user)}
          />
        ))}
      </DataTableCard>
      <ConfirmModal
        {...deleting.modal}
        title={t('member.deleteTitle')}
        confirmLabel={t('common.delete')}
        busy={remove.isPending}
        testId="member-delete"
        onConfirm={() => void confirmDelete()}
      >
        <p className="mb-0">{t('member.deleteConfirm', { email: deleting.target?.emailAddress ?? '' })}</p>
      </ConfirmModal>
      <MemberDisableConfirm
        email={disabling.target?.emailAddress ?? null}
        busy={toggling}
        onConfirm={() => void confirmDisable()}
        onCancel={disabling.cancel}
      />
    </>
  );
}
