import { useState } from 'react';
import Alert from 'react-bootstrap/Alert';
import Badge from 'react-bootstrap/Badge';
import Button from 'react-bootstrap/Button';
import Card from 'react-bootstrap/Card';
import { useTranslation } from 'react-i18next';
import { isAdministrator } from '@ukiyo/contract';
import { ConfirmModal } from '@/components/confirm-modal.tsx';
import { useConfirmation } from '@/lib/use-confirmation.ts';
import { LoadingBlock } from '@/components/loading-block.tsx';
import { PageHeader } from '@/components/page-header.tsx';
import { useApiErrorHandler, useReportQueryError } from '@/lib/api-errors.ts';
import { flash } from '@/lib/flash.ts';
import { isActivated, useSession } from '@/lib/session.ts';
import { useDeleteStatus, useStatusList } from '@/features/status/api/status-api.ts';
import { StatusEventForm, type Event } from './status-event-form.tsx';
import { formatJapanTime } from './status-time.ts';

const STATE_STYLE: Record<Event['state'], { bg: string; text?: 'dark' }> = {
  scheduled: { bg: 'info', text: 'dark' },
  in_progress: { bg: 'warning', text: 'dark' },
  resolved: { bg: 'success' },
};

function EventCard({
  event,
  admin,
  onEdit,
  onDelete,
}: {
  event: Event;
  admin: boolean;
  onEdit: () => void;
  onDelete: () => void;
}) {
  const { t, i18n } = useTranslation();
  const style = STATE_STYLE[event.state];
  return (
    <Card
      className="shadow-sm border-0 mb-3"
      data-testid="status-event"
      data-event-id={event.statusEventID}
      data-kind={event.kind}
    >
      <Card.Body>
        <div className="d-flex flex-wrap align-items-start justify-content-between gap-2">
          <div>
            <div className="d-flex flex-wrap align-items-center gap-2 mb-1">
              <Badge
                bg={style.bg}
                text={style.text}
                data-testid="status-state-badge"
                data-state={event.state}
              >
                {t(`status.state.${event.state}`)}
              </Badge>
              <Badge bg="light" text="dark" className="border">
                {t(`status.kind.${event.kind}`)}
              </Badge>
            </div>
            <h3 className="h6 mb-1" data-testid="status-event-title">
              {event.title}
            </h3>
            <div className="small text-body-secondary" data-testid="status-event-time">
              {formatJapanTime(event.startsAt, i18n.language)}
              {' – '}
              {event.endsAt ? formatJapanTime(event.endsAt, i18n.language) : t('status.noEnd')}
            </div>
          </div>
          {admin && (
            <div className="text-nowrap">
              <Button variant="outline-primary" size="sm" onClick={onEdit} data-testid="status-edit">
                {t('common.edit')}
              </Button>
              <Button
                variant="outline-danger"
                size="sm"
                className="ms-2"
                onClick={onDelete}
                data-testid="status-delete"
              >
                {t('common.delete')}
              </Button>
            </div>
          )}
        </div>
        {event.body && (
          <p className="mb-0 mt-2 small" style={{ whiteSpace: 'pre-line' }}>
            {event.body}
          </p>
        )}
      </Card.Body>
    </Card>
  );
}

function EventSection({
  title,
  events,
  empty,
  testId,
  admin,
  onEdit,
  onDelete,
}: {
  title: string;
  events: Event[];
  empty: string;
  testId: string;
  admin: boolean;
  onEdit: (event: Event) => void;
  onDelete: (event: Event) => void;
}) {
  return (
    <section className="mb-4" data-testid={testId}>
      <h2 className="h5 mb-3">{title}</h2>
      {events.length === 0 ? (
        <p className="text-body-secondary small">{empty}</p>
      ) : (
        events.map((event) => (
          <EventCard
            key={event.statusEventID}
            event={event}
            admin={admin}
            onEdit={() => onEdit(event)}
            onDelete={() => onDelete(event)}
          />
        ))
      )}
    </section>
  );
}

export function StatusPage() {
  const { t } = useTranslation();
  const handleError = useApiErrorHandler();
  const { user } = useSession();
  const admin = user !== null && isActivated(user) && isAdministrator(user.permission);
  const list = useStatusList();
  const remove = useDeleteStatus();
  useReportQueryError(list.error);
  // undefined: no form; null: a new event.
  const [editing, setEditing] = useState<Event | null | undefined>(undefined);
  const deleting = useConfirmation<Event>();

  const confirmDelete = () =>
    deleting.confirm(async (event) => {
      try {
        await remove.mutateAsync({ statusEventID: event.statusEventID });
        flash.now({ variant: 'success', key: 'status.deleted', action: 'status' });
      } catch (error) {
        handleError(error, { action: 'status' });
      }
    });

  const events = list.data?.events ?? [];
  const incidents = events.filter((event) => event.kind === 'incident');
  const maintenance = events.filter((event) => event.kind === 'maintenance');
  const ongoing = incidents.filter((event) => event.state !== 'resolved');
  const externalUrl = list.data?.externalUrl;
  return (
    <>
      <PageHeader
        title={t('title.status')}
        lead={t('status.lead')}
        actions={
          admin && (
            <Button onClick={() => setEditing(null)} data-testid="status-new">
              {t('status.new')}
            </Button>
          )
        }
      />
      {list.isPending ? (
        <LoadingBlock />
      ) : (
        <>
          <Alert
            variant={ongoing.length > 0 ? 'warning' : 'success'}
            className="d-flex flex-wrap justify-content-between gap-2"
            data-testid="status-summary"
          >
            <span>{t(ongoing.length > 0 ? 'status.summaryIncident' : 'status.summaryOk')}</span>
            {externalUrl && (
              <a href={externalUrl} target="_blank" rel="noopener noreferrer" data-testid="status-external">
                {t('status.external')}
              </a>
            )}
          </Alert>
          <p className="small text-body-secondary">{t('status.timeNote')}</p>
          <div className="row g-4">
            {[
              {
                title: t('status.incidents'),
                events: incidents,
                empty: t('status.noIncidents'),
                testId: 'status-incidents',
              },
              {
                title: t('status.maintenance'),
                events: maintenance,
                empty: t('status.noMaintenance'),
                testId: 'status-maintenance',
              },
            ].map((section) => (
              <div key={section.testId} className="col-lg-6">
                <EventSection {...section} admin={admin} onEdit={setEditing} onDelete={deleting.ask} />
              </div>
            ))}
          </div>
        </>
      )}
      {editing !== undefined && (
        <StatusEventForm
          key={editing?.statusEventID ?? 'new'}
          event={editing}
          onClose={() => setEditing(undefined)}
        />
      )}
      <ConfirmModal
        {...deleting.modal}
        title={t('status.deleteTitle')}
        confirmLabel={t('common.delete')}
        busy={remove.isPending}
        testId="status-delete"
        onConfirm={() => void confirmDelete()}
      >
        {t('status.deleteConfirm', { title: deleting.target?.title ?? '' })}
      </ConfirmModal>
    </>
  );
}
