import Button from 'react-bootstrap/Button';
import { useTranslation } from 'react-i18next';
import { useApiErrorHandler, useReportQueryError } from '@/lib/api-errors.ts';
import { flash } from '@/lib/flash.ts';
import { formatDateTime } from '@/lib/format.ts';
import { useDeadLetters, useRetryJob } from '@/features/admin/api/admin-api.ts';
import { AdminListPage } from './admin-list-page.tsx';

/**
 * Durable work that failed its last attempt (webhooks, archive uploads, mail): what it was, where
 * it went and why it failed, never its content; each can be tried once more.
 */
export function DeadLettersPage() {
  const { t, i18n } = useTranslation();
  const deadLetters = useDeadLetters();
  const retry = useRetryJob();
  const handleError = useApiErrorHandler();
  useReportQueryError(deadLetters.error);

  const retryJob = async (kind: 'webhook' | 'archive-upload' | 'mail', jobID: string) => {
    try {
      await retry.mutateAsync({ kind, jobID });
      flash.now({ variant: 'success', key: 'deadLetters.retried', action: 'deadLetters' });
    } catch (error) {
      handleError(error, { action: 'deadLetters' });
    }
  };

  const jobs = deadLetters.data?.jobs ?? [];
  return (
    <AdminListPage
      title={t('title.adminJobs')}
      lead={t('deadLetters.lead')}
      refreshLabel={t('deadLetters.refresh')}
      query={deadLetters}
      rowCount={jobs.length}
      testId="dead-letters"
      empty={t('deadLetters.empty')}
      columns={[
        t('deadLetters.kind'),
        t('deadLetters.target'),
        t('deadLetters.organization'),
        t('deadLetters.attempts'),
        t('deadLetters.lastError'),
        t('deadLetters.failedAt'),
      ]}
    >
      {jobs.map((job) => (
        <tr key={job.jobID} data-testid="dead-letter-row" data-job-id={job.jobID}>
          <td className="text-nowrap">{t(`deadLetters.kindName.${job.kind}`)}</td>
          <td data-testid="dead-letter-target">{job.target}</td>
          <td>{job.organizationName ?? '-'}</td>
          <td data-testid="dead-letter-attempts">{job.attempts}</td>
          <td className="small" data-testid="dead-letter-error">
            {job.lastError}
          </td>
          <td className="text-nowrap small">{formatDateTime(job.failedAt, i18n.language)}</td>
          <td className="text-end text-nowrap">
            <Button
              variant="outline-primary"
              size="sm"
              disabled={retry.isPending}
              onClick={() => void retryJob(job.kind, job.jobID)}
              data-testid="dead-letter-retry"
            >
              {t('deadLetters.retry')}
            </Button>
          </td>
        </tr>
      ))}
    </AdminListPage>
  );
}
