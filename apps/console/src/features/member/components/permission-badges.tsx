import Badge from 'react-bootstrap/Badge';
import { useTranslation } from 'react-i18next';
import { memberPermissionNames } from '../../../lib/permission-choices.ts';

export function PermissionBadges({ mask }: { mask: number }) {
  const { t } = useTranslation();
  const names = memberPermissionNames(mask);
  if (names.length === 0)
    return <span className="text-body-secondary small">{t('member.noPermission')}</span>;
  return (
    <div className="d-flex flex-wrap gap-1">
      {names.map((name) => (
        <Badge
          key={name}
          bg={name === 'admin' ? 'danger' : 'light'}
          text={name === 'admin' ? undefined : 'dark'}
          className={name === 'admin' ? '' : 'border'}
          data-testid="permission-badge"
          data-permission={name}
        >
          {t(`permission.${name}`)}
        </Badge>
      ))}
    </div>
  );
}
