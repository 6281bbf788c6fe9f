import Form from 'react-bootstrap/Form';
import Modal from 'react-bootstrap/Modal';
import Button from 'react-bootstrap/Button';
import { useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import type { OperationOutput, Operations } from '@ukiyo/contract';
import { SubmitButton } from '@/components/submit-button.tsx';
import { FormField, SelectField } from '@/components/form-field.tsx';
import { useFormSubmit } from '@/lib/use-form-submit.ts';
import { flash } from '@/lib/flash.ts';
import { useSaveStatus } from '@/features/status/api/status-api.ts';
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

/** The event's two choices: each value's label is `status.{field}.{value}`. */
const CHOICES: { [Field in 'kind' | 'state']: Event[Field][] } = {
  kind: ['incident', 'maintenance'],
  state: ['scheduled', 'in_progress', 'resolved'],
};

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
  const save = useSaveStatus();
  const form = useForm<FormValues>({ defaultValues: initialValues(event) });
  const required = { required: 'validation.required' };

  const submit = useFormSubmit(form, {
    action: 'status',
    send: async (values) => {
      const startsAt = fromJapanInput(values.startsAt);
      const endsAt = values.endsAt ? fromJapanInput(values.endsAt) : null;
      if (!startsAt) return form.setError('startsAt', { message: 'validation.invalid' });
      if (values.endsAt && !endsAt) return form.setError('endsAt', { message: 'validation.invalid' });
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
    },
  });

  return (
    <Modal show onHide={onClose} centered size="lg" data-testid="status-form-modal">
      <Form noValidate onSubmit={submit} data-testid="status-form">
        <Modal.Header closeButton closeLabel={t('common.close')}>
          <Modal.Title as="h2" className="h5">
            {t(event ? 'status.editTitle' : 'status.newTitle')}
          </Modal.Title>
        </Modal.Header>
        <Modal.Body>
          <div className="row g-3 mb-3">
            {(['kind', 'state'] as const).map((field) => (
              <SelectField
                key={field}
                form={form}
                name={field}
                id={`status-${field}`}
                label={t(`status.${field}`)}
                options={CHOICES[field].map((value) => ({ value, label: t(`status.${field}.${value}`) }))}
                className="col-sm-6"
              />
            ))}
          </div>
          <FormField
            form={form}
            name="title"
            rules={required}
            id="status-title"
            label={t('status.titleField')}
          />
          <FormField
            form={form}
            name="body"
            id="status-body"
            label={t('status.body')}
            as="textarea"
            rows={4}
          />
          <div className="row g-3">
            <FormField
              form={form}
              name="startsAt"
              rules={required}
              id="status-starts"
              label={t('status.startsAt')}
              type="datetime-local"
              className="col-sm-6"
            />
            <FormField
              form={form}
              name="endsAt"
              id="status-ends"
              label={t('status.endsAt')}
              type="datetime-local"
              className="col-sm-6"
            />
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
