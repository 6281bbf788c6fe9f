import { useTranslation } from 'react-i18next';
import { ConfirmModal } from '@/components/confirm-modal.tsx';

/** Asks before a member is disabled: it ends their sessions at once (the list and the edit page). */
export function MemberDisableConfirm({
  email,
  busy,
  onConfirm,
  onCancel,
}: {
  /** The member to disable, or null while nothing is asked. */
  email: string | null;
  busy: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const { t } = useTranslation();
  return (
    <ConfirmModal
      show={email !== null}
      title={t('member.disableTitle')}
      confirmLabel={t('common.disable')}
      busy={busy}
      testId="member-disable"
      onConfirm={onConfirm}
      onCancel={onCancel}
    >
      <p className="mb-0">{t('member.disableConfirm', { email: email ?? '' })}</p>
    </ConfirmModal>
  );
}
