import { Fragment, useState } from 'react';
import Button from 'react-bootstrap/Button';
import { useTranslation } from 'react-i18next';
import { useReportQueryError } from '@/lib/api-errors.ts';
import { formatDateTime, splitLinks } from '@/lib/format.ts';
import { useOutbox } from '@/features/admin/api/admin-api.ts';
import { AdminListPage } from './admin-list-page.tsx';

/** A mail body as text, its addresses as links (activation and reset links are what one needs). */
function MailBody({ body }: { body: string }) {
  return (
    <pre className="outbox-body mb-0" data-testid="outbox-body">
      {splitLinks(body).map((part, index) =>
        part.kind === 'link' ? (
          <a key={index} href={part.value} data-testid="outbox-link">
            {part.value}
          </a>
        ) : (
          <Fragment key={index}>{part.value}</Fragment>
        ),
      )}
    </pre>
  );
}

export function OutboxPage() {
  const { t, i18n } = useTranslation();
  const outbox = useOutbox();
  const [open, setOpen] = useState<ReadonlySet<number>>(new Set());
  useReportQueryError(outbox.error);

  const toggle = (mailID: number) =>
    setOpen((before) => {
      const next = new Set(before);
      if (!next.delete(mailID)) next.add(mailID);
      return next;
    });

  const mails = outbox.data?.mails ?? [];
  return (
    <AdminListPage
      title={t('title.adminOutbox')}
      lead={t('outbox.lead')}
      refreshLabel={t('outbox.refresh')}
      query={outbox}
      rowCount={mails.length}
      testId="outbox"
      empty={t('outbox.empty')}
      columns={[t('outbox.to'), t('outbox.subject'), t('outbox.createdAt')]}
    >
      {mails.map((mail) => {
        const expanded = open.has(mail.mailID);
        return (
          <Fragment key={mail.mailID}>
            <tr data-testid="outbox-row" data-mail-id={mail.mailID} data-to={mail.to}>
              <td>{mail.to}</td>
              <td data-testid="outbox-subject">{mail.subject}</td>
              <td className="text-nowrap small">{formatDateTime(mail.createdAt, i18n.language)}</td>
              <td className="text-end">
                <Button
                  variant="outline-secondary"
                  size="sm"
                  aria-expanded={expanded}
                  aria-controls={`outbox-body-${mail.mailID}`}
                  onClick={() => toggle(mail.mailID)}
                  data-testid="outbox-toggle"
                >
                  {t(expanded ? 'outbox.hideBody' : 'outbox.showBody')}
                </Button>
              </td>
            </tr>
            {expanded && (
              <tr id={`outbox-body-${mail.mailID}`} className="outbox-body-row">
                <td colSpan={4}>
                  <MailBody body={mail.body} />
                </td>
              </tr>
            )}
          </Fragment>
        );
      })}
    </AdminListPage>
  );
}
