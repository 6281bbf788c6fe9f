import { useState } from 'react';
import Alert from 'react-bootstrap/Alert';
import Button from 'react-bootstrap/Button';
import Form from 'react-bootstrap/Form';
import Spinner from 'react-bootstrap/Spinner';
import { useTranslation } from 'react-i18next';
import type { OriginCheckOutcome, OriginCheckResult } from '@ukiyo/contract';
import { useReportQueryError } from '@/lib/api-errors.ts';
import { translateRef } from '@/lib/i18n.ts';
import { formatCount } from '@/lib/usage-format.ts';
import { useOriginCheck } from '@/features/origin/api/origin-api.ts';

const VARIANT: Record<OriginCheckOutcome, 'success' | 'warning' | 'danger'> = {
  ok: 'success',
  forbidden: 'warning',
  notFound: 'warning',
  httpError: 'warning',
  privateAddress: 'danger',
  dnsFailure: 'danger',
  tlsError: 'danger',
  connectionFailed: 'danger',
  redirectFailed: 'danger',
  timeout: 'danger',
  unusable: 'danger',
};

function CheckResult({ result }: { result: OriginCheckResult }) {
  const { t, i18n } = useTranslation();
  const status = result.status ?? '-';
  // A 2xx that is not an image (a site's home page at the origin's root) says how to test one.
  const notImage = result.outcome === 'ok' && !(result.contentType ?? '').startsWith('image/');
  return (
    <Alert
      variant={VARIANT[result.outcome]}
      className="mb-3"
      data-testid="origin-check-result"
      data-outcome={result.outcome}
    >
      <div className="fw-semibold" data-testid="origin-check-message">
        {t(`origin.check.outcome.${result.outcome}`, {
          status,
          reason: result.reason ? translateRef(t, result.reason) : '',
        })}
      </div>
      {notImage && <div className="small mt-1">{t('origin.check.notImage')}</div>}
      <dl className="row small mb-0 mt-2">
        <dt className="col-sm-4">{t('origin.check.path')}</dt>
        <dd className="col-sm-8">
          <code className="text-break">{result.path}</code>
        </dd>
        <dt className="col-sm-4">{t('origin.check.status')}</dt>
        <dd className="col-sm-8" data-testid="origin-check-status">
          {status}
        </dd>
        <dt className="col-sm-4">{t('origin.check.contentType')}</dt>
        <dd className="col-sm-8 text-break" data-testid="origin-check-type">
          {result.contentType ?? '-'}
        </dd>
        <dt className="col-sm-4">{t('origin.check.bytes')}</dt>
        <dd className="col-sm-8">
          {t(result.truncated ? 'origin.check.bytesAtLeast' : 'origin.check.bytesValue', {
            value: formatCount(result.bytes, i18n.language),
          })}
        </dd>
        <dt className="col-sm-4">{t('origin.check.elapsed')}</dt>
        <dd className="col-sm-8 mb-0">
          {t('origin.check.elapsedValue', { value: formatCount(result.elapsedMs, i18n.language) })}
        </dd>
      </dl>
    </Alert>
  );
}

/**
 * Fetches a path of a saved origin through the edge's fetch code and says what happened. With
 * `auto` (just saved) the origin's root is checked at once; otherwise only when asked.
 */
export function OriginCheck({ originID, name, auto }: { originID: number; name: string; auto: boolean }) {
  const { t } = useTranslation();
  const [draft, setDraft] = useState('');
  // `run` counts the requests, so asking again for the same path fetches again.
  const [asked, setAsked] = useState<{ path: string; run: number } | null>(
    auto ? { path: '', run: 0 } : null,
  );
  return (
    <section className="card shadow-sm border-0 mb-4" data-testid="origin-check" aria-live="polite">
      <div className="card-body">
        <h2 className="h6 mb-1">{t('origin.check.title')}</h2>
        <p className="small text-body-secondary mb-3">{t('origin.check.lead', { name })}</p>
        {asked && <CheckRun originID={originID} path={asked.path} run={asked.run} />}
        <Form
          className="d-flex flex-wrap align-items-end gap-2"
          onSubmit={(event) => {
            event.preventDefault();
            setAsked((previous) => ({ path: draft.trim(), run: (previous?.run ?? 0) + 1 }));
          }}
          data-testid="origin-check-form"
        >
          <Form.Group controlId={`origin-check-path-${originID}`} className="flex-grow-1">
            <Form.Label className="small mb-1">{t('origin.check.pathLabel')}</Form.Label>
            <Form.Control
              size="sm"
              value={draft}
              maxLength={1024}
              placeholder="images/photo.jpg"
              onChange={(event) => setDraft(event.target.value)}
              data-testid="origin-check-path"
            />
          </Form.Group>
          <Button type="submit" size="sm" variant="outline-primary" data-testid="origin-check-submit">
            {t(asked ? 'origin.check.again' : 'origin.check.run')}
          </Button>
        </Form>
      </div>
    </section>
  );
}

function CheckRun({ originID, path, run }: { originID: number; path: string; run: number }) {
  const { t } = useTranslation();
  const check = useOriginCheck(originID, path, run);
  useReportQueryError(check.error);
  if (check.isFetching)
    return (
      <div className="small text-body-secondary mb-3" data-testid="origin-check-running">
        <Spinner size="sm" className="me-2" aria-hidden="true" />
        {t('origin.check.running')}
      </div>
    );
  return check.data ? <CheckResult result={check.data.result} /> : null;
}
