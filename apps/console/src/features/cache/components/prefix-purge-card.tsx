import { useState } from 'react';
import Alert from 'react-bootstrap/Alert';
import Button from 'react-bootstrap/Button';
import Card from 'react-bootstrap/Card';
import Col from 'react-bootstrap/Col';
import Form from 'react-bootstrap/Form';
import Row from 'react-bootstrap/Row';
import { useMutation } from '@tanstack/react-query';
import { useForm, useWatch } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { ConfirmModal } from '@/components/confirm-modal.tsx';
import { callApi } from '@/lib/api-client.ts';
import { useApiErrorHandler } from '@/lib/api-errors.ts';
import { FormField } from '@/components/form-field.tsx';
import { OriginSelectField, type OriginChoice } from './origin-select-field.tsx';

type Scope = 'prefix' | 'origin';

interface PurgeForm {
  originID: string;
  scope: Scope;
  prefix: string;
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
  const [confirming, setConfirming] = useState(false);
  const [purged, setPurged] = useState<{ images: number } | null>(null);
  const purge = useMutation({
    mutationFn: (input: { originID: number; pathPrefix: string }) => callApi('cache.purge_prefix', input),
  });
  const form = useForm<PurgeForm>({ defaultValues: { originID: '', scope: 'prefix', prefix: '' } });
  const [originID, scope, prefix] = useWatch({
    control: form.control,
    name: ['originID', 'scope', 'prefix'],
  });
  const pathPrefix = scope === 'origin' ? '/' : slashed(prefix);
  const origin = origins.find((choice) => String(choice.originID) === originID);

  const ask = form.handleSubmit(() => {
    setPurged(null);
    if (!origin) form.setError('originID', { message: 'cache.selectOrigin' });
    else if (scope === 'prefix' && !prefix.trim())
      form.setError('prefix', { message: 'cache.prefixRequired' });
    else setConfirming(true);
  });
  const confirm = async () => {
    setConfirming(false);
    try {
      setPurged(await purge.mutateAsync({ originID: Number(originID), pathPrefix }));
    } catch (error) {
      handleError(error, { action: 'cache' });
    }
  };

  const originLabel = origin ? origin.originName || origin.name : '';
  const scopeChoice = (value: Scope, labelKey: string) => (
    <Form.Check
      type="radio"
      id={`cache-purge-scope-${value}`}
      value={value}
      label={t(labelKey)}
      {...form.register('scope')}
      data-testid={`cache-purge-scope-${value}`}
    />
  );
  return (
    <Card className="shadow-sm border-0 mb-4" data-testid="cache-purge-card">
      <Card.Body className="p-4">
        <h2 className="h5">{t('cache.purgeTitle')}</h2>
        <p className="text-body-secondary small">{t('cache.purgeLead')}</p>
        <Form noValidate onSubmit={(event) => void ask(event)} data-testid="cache-purge-form">
          <Row className="g-3 align-items-start">
            <Col md={4}>
              <OriginSelectField form={form} name="originID" id="cache-purge-origin" origins={origins} />
            </Col>
            <Col md={8}>
              <fieldset>
                <legend className="form-label fs-6">{t('cache.purgeScope')}</legend>
                {scopeChoice('prefix', 'cache.purgeScopePrefix')}
                {scope === 'prefix' && (
                  <FormField
                    form={form}
                    name="prefix"
                    id="cache-purge-prefix"
                    label={t('cache.purgePrefix')}
                    labelHidden
                    maxLength={4096}
                    placeholder="/photos/2024/"
                    help={t('cache.purgePrefixHelp')}
                    className="ms-4 my-2"
                  />
                )}
                {scopeChoice('origin', 'cache.purgeScopeOrigin')}
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
