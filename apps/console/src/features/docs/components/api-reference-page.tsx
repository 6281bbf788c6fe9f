import { useEffect, useRef, useState } from 'react';
import Alert from 'react-bootstrap/Alert';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { paths } from '@/app/paths.ts';
import { LoadingBlock } from '@/components/loading-block.tsx';
import { PageHeader } from '@/components/page-header.tsx';
import 'swagger-ui-dist/swagger-ui.css';
import './api-reference.css';

/** Where the server publishes the API's OpenAPI document (apps/server/src/http/openapi.ts). */
const DOCUMENT_URL = '/api/openapi.json';

/**
 * The interactive API reference: Swagger UI rendering the server's OpenAPI document. The
 * renderer (1.7 MB) is its own chunk, loaded only here.
 */
export function ApiReferencePage() {
  const { t } = useTranslation();
  const host = useRef<HTMLDivElement>(null);
  const [state, setState] = useState<'loading' | 'ready' | 'failed'>('loading');

  useEffect(() => {
    let cancelled = false;
    import('swagger-ui-dist/swagger-ui-es-bundle.js')
      .then(({ default: SwaggerUIBundle }) => {
        if (cancelled || !host.current) return;
        SwaggerUIBundle({
          domNode: host.current,
          url: DOCUMENT_URL,
          deepLinking: false,
          onComplete: () => !cancelled && setState('ready'),
        });
      })
      .catch(() => !cancelled && setState('failed'));
    return () => {
      cancelled = true;
    };
  }, []);

  return (
    <>
      <PageHeader
        title={t('title.apiReference')}
        lead={
          <>
            {t('apiReference.lead')}{' '}
            <Link to={paths.docs('general/platform-api')}>{t('apiReference.guide')}</Link>
            {' · '}
            <a href={DOCUMENT_URL}>openapi.json</a>
          </>
        }
      />
      {state === 'loading' && <LoadingBlock />}
      {state === 'failed' && <Alert variant="danger">{t('apiReference.failed')}</Alert>}
      <div ref={host} className="api-reference" data-testid="api-reference" data-state={state} />
    </>
  );
}
