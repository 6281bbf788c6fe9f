import Badge from 'react-bootstrap/Badge';
import { useTranslation } from 'react-i18next';
import { PermissionBadgeList } from '@/components/permission-badge-list.tsx';
import { tokenGroupNames } from '@/lib/permission-choices.ts';

export function TokenPermissionBadges({ mask }: { mask: number | null }) {
  const { t } = useTranslation();
  const names = tokenGroupNames(mask);
  if (names === null) {
    return (
      <Badge bg="primary" data-testid="token-permission-badge" data-permission="all">
        {t('token.permissionAll')}
      </Badge>
    );
  }
  return (
    <PermissionBadgeList
      names={names}
      label={(name) => t(`tokenPermission.${name}`)}
      testId="token-permission-badge"
      empty={t('token.permissionNone')}
    />
  );
}
