import { JOB_KINDS, type JobKind } from '@ukiyo/contract';
import pino from 'pino';
import { listDeadLetters } from '../../apps/server/src/db/repositories/dead-letters.ts';
import { JobQueue, type ServerDeps } from '../../apps/server/src/index.ts';
import { until } from '../../apps/server/test/processes.ts';

/** What each seeded job says of itself: where it went and how its one attempt failed. */
const FAILURES: Record<JobKind, { data: Record<string, unknown>; error: string }> = {
  webhook: {
    data: { target: 'hooks.example.com', url: 'https://hooks.example.com/live/events', payload: {} },
    error: 'the receiver answered 503',
  },
  'archive-upload': {
    data: { target: 's3://e2e-archive-bucket-with-a-rather-long-name' },
    error: 'NoSuchBucket: The specified bucket does not exist',
  },
  mail: {
    data: { target: 'example.com' },
    error:
      "Can't send mail - all recipients were rejected: 550 5.1.1 <someone@example.com>: mailbox unavailable",
  },
};

/**
 * One dead letter of each kind for the administrators' failed-jobs screen: queued with no
 * retries and worked by handlers that fail, so they are what pg-boss itself leaves behind.
 */
export async function seedDeadLetters(deps: ServerDeps, organizationId: number): Promise<void> {
  const once = { limit: 0, delaySeconds: 1, expireSeconds: 30 };
  const queue = new JobQueue(deps.db, pino({ level: 'silent' }), {
    policies: { webhook: once, 'archive-upload': once, mail: once },
  });
  await queue.start();
  const stops = [];
  for (const kind of JOB_KINDS) {
    const { data, error } = FAILURES[kind];
    stops.push(
      await queue.work(kind, 1, async () => {
        throw new Error(error);
      }),
    );
    await queue.send(kind, {
      ...data,
      target: String(data.target),
      ...(kind === 'mail' ? {} : { organizationId }),
    });
  }
  await until('the seeded jobs failed', async () =>
    (await listDeadLetters(deps.db, 10)).length >= JOB_KINDS.length ? true : undefined,
  );
  for (const stop of stops) await stop();
  await queue.stop();
}
