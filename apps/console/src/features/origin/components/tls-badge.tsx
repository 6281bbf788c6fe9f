import Badge from 'react-bootstrap/Badge';
import { useTranslation } from 'react-i18next';
import type { TlsState } from '@/features/origin/origin-display.ts';

const TLS_BG = { notSet: 'secondary', expired: 'danger', expiresSoon: 'warning', valid: 'success' } as const;

/** A custom domain's certificate: not set, expired, expiring within a month, or valid. */
export function TlsBadge({ state }: { state: TlsState }) {
  const { t } = useTranslation();
  return (
    <Badge
      bg={TLS_BG[state]}
      text={state === 'expiresSoon' ? 'dark' : undefined}
      data-testid="origin-tls"
      data-state={state}
    >
      {t(`origin.tls.${state}`)}
    </Badge>
  );
}
