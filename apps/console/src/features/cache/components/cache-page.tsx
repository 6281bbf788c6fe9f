import { useState } from 'react';
import Alert from 'react-bootstrap/Alert';
import Button from 'react-bootstrap/Button';
import Card from 'react-bootstrap/Card';
import Col from 'react-bootstrap/Col';
import Form from 'react-bootstrap/Form';
import ListGroup from 'react-bootstrap/ListGroup';
import Row from 'react-bootstrap/Row';
import Spinner from 'react-bootstrap/Spinner';
import { useMutation } from '@tanstack/react-query';
import { useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { useSearchParams } from 'react-router';
import { ConfirmModal } from '@/components/confirm-modal.tsx';
import { FormField } from '@/components/form-field.tsx';
import { PageHeader } from '@/components/page-header.tsx';
import { callApi } from '@/lib/api-client.ts';
import { useApiErrorHandler, useReportQueryError } from '@/lib/api-errors.ts';
import { flash } from '@/lib/flash.ts';
import { useOriginChoices } from '@/features/origin/api/origin-api.ts';
import { OriginSelectField } from './origin-select-field.tsx';
import { PrefixPurgeCard } from './prefix-purge-card.tsx';

interface CacheForm {
  originID: string;
  url: string;
}

type Action = 'lookup' | 'delete';

/**
 * Every cached variant of one image (all sizes and formats made from it): look them up, or
 * delete them so the next request converts the image again from the origin.
 */
export function CachePage() {
  const { t } = useTranslation();
  const handleError = useApiErrorHandler();
  const [search] = useSearchParams();
  const origins = useOriginChoices();
  useReportQueryError(origins.error);
  const [result, setResult] = useState<{ action: Action; urls: string[] } | null>(null);
  const [confirmingDelete, setConfirmingDelete] = useState(false);
  const call = useMutation({
    mutationFn: ({ action, originID, url }: { action: Action; originID: number; url: string }) =>
      callApi(action === 'lookup' ? 'cache.lookup' : 'cache.delete', { originID, url }),
  });
  const form = useForm<CacheForm>({
    defaultValues: { originID: search.get('origin') ?? '', url: search.get('url') ?? '' },
  });
  const { handleSubmit, setError } = form;

  /** `confirmed`: the user said yes to deleting (asked once the form is valid). */
  const run = (action: Action, confirmed = false) =>
    handleSubmit(async ({ originID, url }) => {
      const input = { originID: Number(originID), url: url.trim() };
      if (!originID) setError('originID', { message: 'cache.selectOrigin' });
      if (!input.url) setError('url', { message: 'validation.required' });
      if (!originID || !input.url) return;
      // Deleting makes every variant convert again from the origin: the user says yes first.
      if (action === 'delete' && !confirmed) {
        setConfirmingDelete(true);
        return;
      }
      setConfirmingDelete(false);
      setResult(null);
      try {
        const { urls } = await call.mutateAsync({ action, ...input });
        setResult({ action, urls });
        if (action === 'delete' && urls.length > 0) {
          flash.now({ variant: 'success', key: 'cache.deleted', action: 'cache' });
        }
      } catch (error) {
        handleError(error, { setError, action: 'cache' });
      }
    });

  const list = origins.data?.origins ?? [];
  return (
    <>
      <PageHeader title={t('title.cache')} lead={t('cache.lead')} />
      <Card className="shadow-sm border-0 mb-4">
        <Card.Body className="p-4">
          <Form noValidate onSubmit={(event) => void run('lookup')(event)} data-testid="cache-form">
            <Row className="g-3 align-items-start">
              <Col md={4}>
                <OriginSelectField form={form} name="originID" id="cache-origin" origins={list} />
              </Col>
              <Col md={8}>
                <FormField
                  form={form}
                  name="url"
                  id="cache-url"
                  label={t('cache.url')}
                  placeholder="https://abc123.img.example.com/w=400/photos/cat.jpg"
                  help={t('cache.urlHelp')}
                  className=""
                />
              </Col>
            </Row>
            <div className="d-flex gap-2 mt-4">
              <Button type="submit" disabled={call.isPending} data-testid="cache-lookup">
                {call.isPending && call.variables?.action === 'lookup' && (
                  <Spinner size="sm" className="me-2" aria-hidden="true" />
                )}
                {t('cache.lookup')}
              </Button>
              <Button
                variant="outline-danger"
                disabled={call.isPending}
                onClick={(event) => void run('delete')(event)}
                data-testid="cache-delete"
              >
                {call.isPending && call.variables?.action === 'delete' && (
                  <Spinner size="sm" className="me-2" aria-hidden="true" />
                )}
                {t('cache.delete')}
              </Button>
            </div>
          </Form>
        </Card.Body>
      </Card>
      {result &&
        (result.urls.length === 0 ? (
          <Alert variant="secondary" data-testid="cache-none">
            {t('cache.none')}
          </Alert>
        ) : (
          <Card className="shadow-sm border-0" data-testid="cache-result" data-action={result.action}>
            <Card.Header className="bg-body">
              {t(result.action === 'lookup' ? 'cache.found' : 'cache.deletedList', {
                count: result.urls.length,
              })}
            </Card.Header>
            <ListGroup variant="flush">
              {result.urls.map((url) => (
                <ListGroup.Item
                  key={url}
                  className="small text-break font-monospace"
                  data-testid="cache-variant"
                >
                  {url}
                </ListGroup.Item>
              ))}
            </ListGroup>
          </Card>
        ))}
      <PrefixPurgeCard origins={list} />
      <ConfirmModal
        show={confirmingDelete}
        title={t('cache.deleteTitle')}
        confirmLabel={t('cache.delete')}
        busy={call.isPending}
        testId="cache-delete"
        onConfirm={() => void run('delete', true)()}
        onCancel={() => setConfirmingDelete(false)}
      >
        <p className="mb-0">{t('cache.deleteConfirm')}</p>
      </ConfirmModal>
    </>
  );
}
