import Badge from 'react-bootstrap/Badge';
import { useTranslation } from 'react-i18next';
import { tokenGroupNames } from '../../../lib/permission-choices.ts';

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
  if (names.length === 0)
    return <span className="small text-body-secondary">{t('token.permissionNone')}</span>;
  return (
    <div className="d-flex flex-wrap gap-1">
      {names.map((name) => (
        <Badge
          key={name}
          bg={name === 'admin' ? 'danger' : 'light'}
          text={name === 'admin' ? undefined : 'dark'}
          className={name === 'admin' ? '' : 'border'}
          data-testid="token-permission-badge"
          data-permission={name}
        >
          {t(`tokenPermission.${name}`)}
        </Badge>
      ))}
    </div>
  );
}
