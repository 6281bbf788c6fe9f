import Badge from 'react-bootstrap/Badge';
import { useTranslation } from 'react-i18next';

/** "Enabled" or "Disabled" as a badge, with `data-enabled` for tests. */
export function EnabledBadge({
  enabled,
  testId,
  className,
}: {
  enabled: boolean;
  testId: string;
  className?: string;
}) {
  const { t } = useTranslation();
  return (
    <Badge
      bg={enabled ? 'success' : 'secondary'}
      className={className}
      data-testid={testId}
      data-enabled={enabled}
    >
      {t(enabled ? 'common.enabled' : 'common.disabled')}
    </Badge>
  );
}
