import type { ReactNode } from 'react';
import Alert from 'react-bootstrap/Alert';
import { useTranslation } from 'react-i18next';
import { Link, useParams } from 'react-router';
import type { Origin } from '@ukiyo/contract';
import { paths } from '@/app/paths.ts';
import { LoadingBlock } from '@/components/loading-block.tsx';
import { useRecordNotFound } from '@/lib/api-errors.ts';
import { useOrigin } from '@/features/origin/api/origin-api.ts';

/** The route's origin (`:id`, or `:copyId` when copying), parsed; NaN when the URL names none. */
export function useOriginParam(): number {
  const { id, copyId } = useParams();
  return Number(id ?? copyId);
}

/**
 * Loads the origin a page is about and renders it, or says it could not be found, with its ID
 * (console-spec section 8): a deleted origin, a mistyped URL or another organization's origin.
 */
export function OriginLoader({
  originID,
  children,
}: {
  originID: number;
  children: (origin: Origin) => ReactNode;
}) {
  const { t } = useTranslation();
  const query = useOrigin(originID);
  const notFound = useRecordNotFound(originID, query);
  if (notFound) {
    return (
      <Alert variant="warning" data-testid="origin-not-found">
        {t('error.originNotFound', { id: Number.isNaN(originID) ? '-' : originID })}{' '}
        <Link to={paths.originIndex()} className="alert-link">
          {t('origin.backToList')}
        </Link>
      </Alert>
    );
  }
  if (!query.data) return query.isPending ? <LoadingBlock /> : null;
  return children(query.data.origin);
}
