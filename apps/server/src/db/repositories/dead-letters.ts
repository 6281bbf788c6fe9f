import { JOB_KINDS, type DeadLetter, type JobKind } from '@ukiyo/contract';
import { sql } from 'kysely';
import type { Db } from '../database.ts';

interface DeadLetterRow {
  id: string;
  name: JobKind;
  target: string | null;
  organization_name: string | null;
  retry_count: number;
  message: string | null;
  completed_on: Date | string;
}

/**
 * The newest jobs that failed their last attempt, from pg-boss's table: only the target host and
 * the error's message of the job's data and output, never the payload (a mail's text, an
 * event's body). A job that expired in a killed process has pg-boss's own message.
 */
export async function listDeadLetters(db: Db, limit: number): Promise<DeadLetter[]> {
  const { rows } = await sql<DeadLetterRow>`
    select j.id, j.name, j.data->>'target' as target, o.name as organization_name, j.retry_count,
      coalesce(j.output->>'message', j.output->'value'->>'message') as message, j.completed_on
    from pgboss.job j
    left join organizations o on o.id = (j.data->>'organizationId')::integer
    where j.state = 'failed' and j.name in (${sql.join([...JOB_KINDS])})
    order by j.completed_on desc
    limit ${limit}
  `.execute(db);
  return rows.map((row) => ({
    jobID: row.id,
    kind: row.name,
    target: row.target ?? '',
    organizationName: row.organization_name,
    attempts: row.retry_count + 1,
    lastError: (row.message ?? '').slice(0, 300),
    failedAt: new Date(row.completed_on).toISOString(),
  }));
}
