import { JOB_KINDS, type JobKind } from '@ukiyo/contract';
import { CompiledQuery, sql, type Kysely, type Transaction } from 'kysely';
import PgBoss from 'pg-boss';
import type { Logger } from 'pino';
import type { Database } from '../db/tables.ts';

/**
 * How often a kind is tried: `limit` retries after the first attempt, the n-th retry
 * `delaySeconds * 2^(n-1)` to twice that later (pg-boss's backoff with jitter). A job whose
 * worker vanished (a killed process) is tried again once `expireSeconds` have passed since it
 * started, so that bounds one attempt.
 */
export interface RetryPolicy {
  limit: number;
  delaySeconds: number;
  expireSeconds: number;
}

export const RETRY_POLICIES: Record<JobKind, RetryPolicy> = {
  // 8 attempts over 10 to 21 minutes; an attempt is one POST with a 5 s timeout.
  webhook: { limit: 7, delaySeconds: 5, expireSeconds: 15 },
  // 6 attempts over 2.5 to 5 minutes; one PUT has 10 s to connect and 30 s to answer.
  'archive-upload': { limit: 5, delaySeconds: 5, expireSeconds: 60 },
  // 6 attempts over 15 to 31 minutes: an SMTP server that is down is often down for a while.
  mail: { limit: 5, delaySeconds: 30, expireSeconds: 60 },
};

/** What every job's data carries besides its own fields: where it goes, for the dead letters. */
export interface JobTarget {
  /** A host name (or a mail domain, a bucket): never a full URL, which may hold a secret. */
  target: string;
  organizationId?: number;
}

export interface Job<T> {
  id: string;
  data: T & JobTarget;
  /** Whether this is the last attempt before the job is a dead letter. */
  lastAttempt: boolean;
}

/** Runs SQL on a Kysely executor: the database's own pool or PGlite, or an open transaction. */
function executorOf(db: Kysely<Database> | Transaction<Database>): PgBoss.Db {
  return {
    executeSql: async (text, values) => {
      const result = await db.executeQuery(CompiledQuery.raw(text, values ?? []));
      return { rows: result.rows as unknown[] };
    },
  };
}

export interface JobQueueOptions {
  policies?: Partial<Record<JobKind, RetryPolicy>>;
  /** How often an idle worker asks for work (seconds); a job sent in this process wakes it. */
  pollSeconds?: number;
  /** How often expired jobs are failed and old ones archived (seconds). */
  maintenanceSeconds?: number;
  /**
   * No other process works this database's jobs (embedded PGlite): a job found active at start
   * was in hand when the previous process died.
   */
  soleWorker?: boolean;
}

/**
 * Durable work (webhooks, archive uploads, mail) on pg-boss, in the application's own database:
 * PostgreSQL, or embedded PGlite, since pg-boss runs its SQL through the same Kysely executor
 * (`executorOf`) as every repository. A job failing its last attempt stays `failed` (the dead
 * letter) for 30 days, where administrators see (`db/repositories/dead-letters.ts`) and retry it.
 */
export class JobQueue {
  private readonly boss: PgBoss;
  private readonly policies: Record<JobKind, RetryPolicy>;
  private readonly workers = new Map<JobKind, string[]>();
  private readonly pollSeconds: number;
  private readonly soleWorker: boolean;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly log: Logger,
    options: JobQueueOptions = {},
  ) {
    this.policies = { ...RETRY_POLICIES, ...options.policies };
    this.pollSeconds = options.pollSeconds ?? 1;
    this.soleWorker = options.soleWorker ?? false;
    this.boss = new PgBoss({
      db: executorOf(db),
      // Cron schedules are not used; their clock checks would be queries for nothing.
      schedule: false,
      maintenanceIntervalSeconds: options.maintenanceSeconds ?? 10,
      archiveFailedAfterSeconds: 30 * 24 * 3600,
    });
    this.boss.on('error', (error) => log.warn({ err: error }, 'job queue error'));
  }

  /**
   * Creates or migrates pg-boss's own schema (`pgboss`, versioned by pg-boss) and the queues. As
   * the sole worker, fails the jobs the previous process died holding: they are retried after
   * their backoff, not once their attempt expires (a minute for an upload).
   */
  async start(): Promise<void> {
    await this.boss.start();
    for (const kind of JOB_KINDS) await this.boss.createQueue(kind);
    if (this.soleWorker) await this.failOrphans();
  }

  private async failOrphans(): Promise<void> {
    const { rows } = await sql<{ name: JobKind; id: string }>`
      select name, id::text as id from pgboss.job where state = 'active'
    `.execute(this.db);
    for (const { name, id } of rows)
      await this.boss.fail(name, id, { message: 'the process working it stopped' });
    if (rows.length > 0)
      this.log.info({ jobs: rows.length }, 'jobs in hand when the last process stopped are retried');
  }

  /**
   * Queues a job; with `trx`, inside that transaction, so the job exists exactly when the rows
   * it is about do (a mail and its outbox row, an uploaded file and its event).
   */
  async send<T extends object>(
    kind: JobKind,
    data: T & JobTarget,
    trx?: Transaction<Database>,
  ): Promise<string> {
    const policy = this.policies[kind];
    const id = await this.boss.send(kind, data, {
      retryLimit: policy.limit,
      retryDelay: policy.delaySeconds,
      retryBackoff: true,
      expireInSeconds: policy.expireSeconds,
      ...(trx ? { db: executorOf(trx) } : {}),
    });
    if (!id) throw new Error(`job of kind ${kind} not queued`);
    // A job queued inside a transaction is not visible until the commit: the poll finds it.
    if (!trx) for (const worker of this.workers.get(kind) ?? []) this.boss.notifyWorker(worker);
    return id;
  }

  /**
   * Works jobs of a kind in this process, `concurrency` at a time (a throw is a failed attempt);
   * resolves to a function that stops these workers, letting the jobs in hand finish.
   */
  async work<T extends object>(
    kind: JobKind,
    concurrency: number,
    handler: (job: Job<T>) => Promise<void>,
  ): Promise<() => Promise<void>> {
    const ids: string[] = [];
    const inHand = new Set<Promise<void>>();
    const run = async (job: PgBoss.JobWithMetadata<T & JobTarget>) => {
      try {
        await handler({
          id: job.id,
          data: job.data,
          lastAttempt: job.retryCount >= job.retryLimit,
        });
      } catch (error) {
        this.log.info({ err: error, kind, jobId: job.id, target: job.data.target }, 'job attempt failed');
        throw error;
      }
    };
    for (let i = 0; i < concurrency; i++) {
      let workerId = '';
      workerId = await this.boss.work<T & JobTarget>(
        kind,
        { includeMetadata: true, pollingIntervalSeconds: this.pollSeconds },
        async ([job]) => {
          if (!job) return;
          const running = run(job);
          inHand.add(running);
          try {
            await running;
          } finally {
            inHand.delete(running);
            // pg-boss waits out the polling interval even after a job: one job a second per
            // worker. A worker that found one asks again at once; an empty queue waits.
            if (workerId) this.boss.notifyWorker(workerId);
          }
        },
      );
      ids.push(workerId);
    }
    this.workers.set(kind, [...(this.workers.get(kind) ?? []), ...ids]);
    return async () => {
      this.workers.set(
        kind,
        (this.workers.get(kind) ?? []).filter((id) => !ids.includes(id)),
      );
      for (const id of ids) await this.boss.offWork({ id });
      // pg-boss stops fetching but does not wait: the caller may close what the jobs use next.
      await Promise.allSettled([...inHand]);
    };
  }

  /** Puts a dead letter back in line for one more attempt; false when no such failed job. */
  async retry(kind: JobKind, id: string): Promise<boolean> {
    const before = await this.boss.getJobById(kind, id);
    if (before?.state !== 'failed') return false;
    await this.boss.retry(kind, id);
    for (const worker of this.workers.get(kind) ?? []) this.boss.notifyWorker(worker);
    return true;
  }

  /**
   * Stops working: jobs in hand get `graceMs` to finish, then count as a failed attempt and are
   * retried by whichever process works their kind.
   */
  async stop(graceMs = 10_000): Promise<void> {
    await this.boss.stop({ graceful: true, timeout: graceMs, wait: true });
  }
}
