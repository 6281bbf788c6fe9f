import Form from 'react-bootstrap/Form';
import Modal from 'react-bootstrap/Modal';
import Button from 'react-bootstrap/Button';
import { useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import type { OperationOutput, Operations } from '@ukiyo/contract';
import { FieldError } from '../../../components/field-error.tsx';
import { SubmitButton } from '../../../components/submit-button.tsx';
import { TextField } from '../../../components/text-field.tsx';
import { useApiErrorHandler } from '../../../lib/api-errors.ts';
import { flash } from '../../../lib/flash.ts';
import { useSaveStatus } from '../api/status-api.ts';
import { fromJapanInput, toJapanInput } from './status-time.ts';

export type Event = OperationOutput<Operations['status.list']>['events'][number];

interface FormValues {
  kind: Event['kind'];
  state: Event['state'];
  title: string;
  body: string;
  startsAt: string;
  endsAt: string;
}

const KINDS: Event['kind'][] = ['incident', 'maintenance'];
const STATES: Event['state'][] = ['scheduled', 'in_progress', 'resolved'];

function initialValues(event: Event | null): FormValues {
  if (!event) {
    return { kind: 'incident', state: 'in_progress', title: '', body: '', startsAt: '', endsAt: '' };
  }
  return {
    kind: event.kind,
    state: event.state,
    title: event.title,
    body: event.body,
    startsAt: toJapanInput(event.startsAt),
    endsAt: event.endsAt ? toJapanInput(event.endsAt) : '',
  };
}

/** Create (event null) or edit a status event; times are entered in Japan time. */
export function StatusEventForm({ event, onClose }: { event: Event | null; onClose: () => void }) {
  const { t } = useTranslation();
  const handleError = useApiErrorHandler();
  const save = useSaveStatus();
  const {
    register,
    handleSubmit,
    setError,
    formState: { errors },
  } = useForm<FormValues>({ defaultValues: initialValues(event) });

  const submit = handleSubmit(async (values) => {
    const startsAt = fromJapanInput(values.startsAt);
    const endsAt = values.endsAt ? fromJapanInput(values.endsAt) : null;
    if (!startsAt) return setError('startsAt', { message: 'validation.invalid' });
    if (values.endsAt && !endsAt) return setError('endsAt', { message: 'validation.invalid' });
    try {
      await save.mutateAsync({
        statusEventID: event?.statusEventID ?? -1,
        kind: values.kind,
        state: values.state,
        title: values.title,
        body: values.body,
        startsAt,
        endsAt,
      });
      flash.now({ variant: 'success', key: event ? 'status.updated' : 'status.created', action: 'status' });
      onClose();
    } catch (error) {
      handleError(error, { setError, action: 'status' });
    }
  });

  return (
    <Modal show onHide={onClose} centered size="lg" data-testid="status-form-modal">
      <Form noValidate onSubmit={(e) => void submit(e)} data-testid="status-form">
        <Modal.Header closeButton closeLabel={t('common.close')}>
          <Modal.Title as="h2" className="h5">
            {t(event ? 'status.editTitle' : 'status.newTitle')}
          </Modal.Title>
        </Modal.Header>
        <Modal.Body>
          <div className="row g-3 mb-3">
            <Form.Group className="col-sm-6" controlId="status-kind">
              <Form.Label>{t('status.kind')}</Form.Label>
              <Form.Select {...register('kind')} data-testid="status-kind">
                {KINDS.map((kind) => (
                  <option key={kind} value={kind}>
                    {t(`status.kind.${kind}`)}
                  </option>
                ))}
              </Form.Select>
            </Form.Group>
            <Form.Group className="col-sm-6" controlId="status-state">
              <Form.Label>{t('status.state')}</Form.Label>
              <Form.Select {...register('state')} data-testid="status-state">
                {STATES.map((state) => (
                  <option key={state} value={state}>
                    {t(`status.state.${state}`)}
                  </option>
                ))}
              </Form.Select>
            </Form.Group>
          </div>
          <TextField
            id="status-title"
            label={t('status.titleField')}
            registration={register('title', { required: 'validation.required' })}
            error={errors.title}
          />
          <TextField
            id="status-body"
            label={t('status.body')}
            as="textarea"
            rows={4}
            registration={register('body')}
            error={errors.body}
          />
          <div className="row g-3">
            <Form.Group className="col-sm-6" controlId="status-starts">
              <Form.Label>{t('status.startsAt')}</Form.Label>
              <Form.Control
                type="datetime-local"
                isInvalid={!!errors.startsAt}
                data-testid="status-starts"
                {...register('startsAt', { required: 'validation.required' })}
              />
              <FieldError error={errors.startsAt} />
            </Form.Group>
            <Form.Group className="col-sm-6" controlId="status-ends">
              <Form.Label>{t('status.endsAt')}</Form.Label>
              <Form.Control
                type="datetime-local"
                isInvalid={!!errors.endsAt}
                data-testid="status-ends"
                {...register('endsAt')}
              />
              <FieldError error={errors.endsAt} />
            </Form.Group>
          </div>
          <Form.Text className="d-block mt-2">{t('status.timeHelp')}</Form.Text>
        </Modal.Body>
        <Modal.Footer>
          <Button variant="outline-secondary" onClick={onClose} data-testid="status-cancel">
            {t('common.cancel')}
          </Button>
          <SubmitButton busy={save.isPending} testId="status-submit">
            {t('common.save')}
          </SubmitButton>
        </Modal.Footer>
      </Form>
    </Modal>
  );
}
