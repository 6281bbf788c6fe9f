import { useTranslation } from 'react-i18next';
import { PermissionBadgeList } from '@/components/permission-badge-list.tsx';
import { memberPermissionNames } from '@/lib/permission-choices.ts';

export function PermissionBadges({ mask }: { mask: number }) {
  const { t } = useTranslation();
  return (
    <PermissionBadgeList
      names={memberPermissionNames(mask)}
      label={(name) => t(`permission.${name}`)}
      testId="permission-badge"
      empty={t('member.noPermission')}
    />
  );
}
