import Badge from 'react-bootstrap/Badge';
import Spinner from 'react-bootstrap/Spinner';
import { useTranslation } from 'react-i18next';
import type { Origin } from '@ukiyo/contract';
import { statusName, statusReasonKey } from '@/features/origin/origin-display.ts';
import { translateRef } from '@/lib/i18n.ts';

const STATUS_BG = { error: 'danger', applied: 'success', updating: 'warning' } as const;

/**
 * An origin's state as the edges report it: Updating (with a spinner) until an edge has loaded
 * it, then Applied, or Error with the edge's reason, translated (the edge writes a message
 * reference; a reason from before references existed reads as the generic one).
 */
export function OriginStatusBadge({ origin }: { origin: Pick<Origin, 'status' | 'statusMessage'> }) {
  const { t } = useTranslation();
  const name = statusName(origin.status);
  const reason = name === 'error' ? statusReasonKey(origin.statusMessage) : null;
  return (
    <>
      <Badge
        bg={STATUS_BG[name]}
        text={name === 'updating' ? 'dark' : undefined}
        data-testid="origin-status"
        data-status={name}
      >
        {name === 'updating' && <Spinner size="sm" className="me-1" aria-hidden="true" />}
        {t(`origin.status.${name}`)}
      </Badge>
      {reason && (
        <div className="small text-danger mt-1" data-testid="origin-status-reason">
          {translateRef(t, reason)}
        </div>
      )}
    </>
  );
}
