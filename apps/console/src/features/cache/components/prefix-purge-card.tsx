import { useState, type FormEvent } from 'react';
import Alert from 'react-bootstrap/Alert';
import Button from 'react-bootstrap/Button';
import Card from 'react-bootstrap/Card';
import Col from 'react-bootstrap/Col';
import Form from 'react-bootstrap/Form';
import Row from 'react-bootstrap/Row';
import { useMutation } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { ConfirmModal } from '@/components/confirm-modal.tsx';
import { callApi } from '@/lib/api-client.ts';
import { useApiErrorHandler } from '@/lib/api-errors.ts';

type Scope = 'prefix' | 'origin';

interface OriginChoice {
  originID: number;
  name: string;
  originName: string;
}

/** The path prefix as the operation takes it: with its leading slash. */
function slashed(prefix: string): string {
  const trimmed = prefix.trim();
  return trimmed.startsWith('/') ? trimmed : `/${trimmed}`;
}

/**
 * Purges many images at once: every image of an origin whose path starts with a prefix, or
 * the whole origin, on every edge and the shared result cache, after a confirmation.
 */
export function PrefixPurgeCard({ origins }: { origins: readonly OriginChoice[] }) {
  const { t } = useTranslation();
  const handleError = useApiErrorHandler();
  const [originID, setOriginID] = useState('');
  const [scope, setScope] = useState<Scope>('prefix');
  const [prefix, setPrefix] = useState('');
  const [problem, setProblem] = useState<'cache.selectOrigin' | 'cache.prefixRequired' | null>(null);
  const [confirming, setConfirming] = useState(false);
  const [purged, setPurged] = useState<{ images: number } | null>(null);
  const purge = useMutation({
    mutationFn: (input: { originID: number; pathPrefix: string }) => callApi('cache.purge_prefix', input),
  });
  const pathPrefix = scope === 'origin' ? '/' : slashed(prefix);
  const origin = origins.find((choice) => String(choice.originID) === originID);

  const ask = (event: FormEvent) => {
    event.preventDefault();
    setPurged(null);
    const missing = !origin
      ? 'cache.selectOrigin'
      : scope === 'prefix' && !prefix.trim()
        ? 'cache.prefixRequired'
        : null;
    setProblem(missing);
    if (!missing) setConfirming(true);
  };
  const confirm = async () => {
    setConfirming(false);
    try {
      setPurged(await purge.mutateAsync({ originID: Number(originID), pathPrefix }));
    } catch (error) {
      handleError(error, { action: 'cache' });
    }
  };

  const originLabel = origin ? origin.originName || origin.name : '';
  return (
    <Card className="shadow-sm border-0 mb-4" data-testid="cache-purge-card">
      <Card.Body className="p-4">
        <h2 className="h5">{t('cache.purgeTitle')}</h2>
        <p className="text-body-secondary small">{t('cache.purgeLead')}</p>
        <Form noValidate onSubmit={ask} data-testid="cache-purge-form">
          <Row className="g-3 align-items-start">
            <Col md={4}>
              <Form.Group controlId="cache-purge-origin">
                <Form.Label>{t('cache.origin')}</Form.Label>
                <Form.Select
                  value={originID}
                  isInvalid={problem === 'cache.selectOrigin'}
                  onChange={(event) => setOriginID(event.target.value)}
                  data-testid="cache-purge-origin"
                >
                  <option value="">{t('cache.selectOrigin')}</option>
                  {origins.map((choice) => (
                    <option key={choice.originID} value={choice.originID}>
                      {choice.originName || choice.name}
                    </option>
                  ))}
                </Form.Select>
                <Form.Control.Feedback type="invalid">{t('cache.selectOrigin')}</Form.Control.Feedback>
              </Form.Group>
            </Col>
            <Col md={8}>
              <fieldset>
                <legend className="form-label fs-6">{t('cache.purgeScope')}</legend>
                <Form.Check
                  type="radio"
                  id="cache-purge-scope-prefix"
                  name="cache-purge-scope"
                  label={t('cache.purgeScopePrefix')}
                  checked={scope === 'prefix'}
                  onChange={() => setScope('prefix')}
                  data-testid="cache-purge-scope-prefix"
                />
                {scope === 'prefix' && (
                  <Form.Group controlId="cache-purge-prefix" className="ms-4 my-2">
                    <Form.Label className="visually-hidden">{t('cache.purgePrefix')}</Form.Label>
                    <Form.Control
                      value={prefix}
                      maxLength={4096}
                      placeholder="/photos/2024/"
                      isInvalid={problem === 'cache.prefixRequired'}
                      onChange={(event) => setPrefix(event.target.value)}
                      data-testid="cache-purge-prefix"
                    />
                    <Form.Control.Feedback type="invalid">{t('cache.prefixRequired')}</Form.Control.Feedback>
                    <Form.Text>{t('cache.purgePrefixHelp')}</Form.Text>
                  </Form.Group>
                )}
                <Form.Check
                  type="radio"
                  id="cache-purge-scope-origin"
                  name="cache-purge-scope"
                  label={t('cache.purgeScopeOrigin')}
                  checked={scope === 'origin'}
                  onChange={() => setScope('origin')}
                  data-testid="cache-purge-scope-origin"
                />
              </fieldset>
            </Col>
          </Row>
          <Button
            type="submit"
            variant="outline-danger"
            className="mt-3"
            disabled={purge.isPending}
            data-testid="cache-purge"
          >
            {t('cache.purge')}
          </Button>
        </Form>
        {purged && (
          <Alert variant="success" className="mt-3 mb-0" data-testid="cache-purged">
            {t('cache.purged', { count: purged.images })}
          </Alert>
        )}
      </Card.Body>
      <ConfirmModal
        show={confirming}
        title={t('cache.purgeTitle')}
        confirmLabel={t('cache.purge')}
        busy={purge.isPending}
        testId="cache-purge"
        onConfirm={() => void confirm()}
        onCancel={() => setConfirming(false)}
      >
        <p className="mb-0 text-break">
          {scope === 'origin'
            ? t('cache.purgeOriginConfirm', { origin: originLabel })
            : t('cache.purgePrefixConfirm', { origin: originLabel, prefix: pathPrefix })}
        </p>
      </ConfirmModal>
    </Card>
  );
}
