import { ALL_PERMISSIONS, type DeadLetter } from '@ukiyo/contract';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobQueue } from '../src/jobs/queue.ts';
import {
  type Client,
  createTenant,
  createTestUser,
  loggedIn,
  loggedInAdministrator,
  startSmtpSink,
  testServer,
  type TestServer,
  unique,
} from './harness.ts';
import { until } from './processes.ts';

/**
 * The durable job queue (pg-boss on the test database, PGlite or PostgreSQL) through mail:
 * backoff between attempts, the dead letter after the last one, and the administrators' list
 * and retry. A queue of its own gives mail short delays; the server's handlers share the table.
 */
let server: TestServer;
let admin: Client;
let queue: JobQueue;
beforeAll(async () => {
  server = await testServer();
  admin = await loggedInAdministrator(server);
  queue = new JobQueue(server.deps.db, pino({ level: 'silent' }), {
    policies: { mail: { limit: 2, delaySeconds: 1, expireSeconds: 10 } },
  });
  await queue.start();
});
afterAll(() => queue.stop());

async function deadLetters(): Promise<DeadLetter[]> {
  const listed = await admin.call('admin.job_failed_list');
  expect(listed.status).toBe(200);
  return listed.body.jobs as DeadLetter[];
}

describe('mail through the job queue', () => {
  it('retries a refused mail with growing delays until the SMTP server takes it', async () => {
    const attempts: number[] = [];
    const smtp = await startSmtpSink(server.deps, {
      jobs: queue,
      refuse: () => attempts.push(Date.now()) <= 2,
    });
    const to = `${unique('retry')}@example.com`;
    try {
      await smtp.mailer.send({ to, subject: 'Hello', text: 'third time lucky\n' });
      await until('the mail delivered', async () => (smtp.received.length > 0 ? true : undefined), 30_000);
    } finally {
      await smtp.close();
    }
    expect(attempts).toHaveLength(3);
    // pg-boss's backoff: 1-2 s after the first failure, 2-4 s after the second.
    expect(attempts[1]! - attempts[0]!).toBeGreaterThanOrEqual(900);
    expect(attempts[2]! - attempts[1]!).toBeGreaterThanOrEqual(1_900);
    const row = await server.deps.db
      .selectFrom('mail_outbox')
      .select(['sent_at', 'error'])
      .where('recipient', '=', to)
      .executeTakeFirstOrThrow();
    expect(row.sent_at).not.toBeNull();
    expect(row.error).toBeNull();
  });

  it('keeps a mail that failed every attempt as a dead letter, listed and retried by administrators', async () => {
    let refusing = true;
    const smtp = await startSmtpSink(server.deps, { jobs: queue, refuse: () => refusing });
    const tenant = await createTenant(server.deps);
    const domain = `${unique('dead')}.example`;
    const to = `someone@${domain}`;
    try {
      await smtp.mailer.send({ to, subject: 'Secret subject', text: 'a body nobody else should read\n' });
      const dead = await until(
        'the dead letter',
        async () => (await deadLetters()).find((job) => job.target === domain),
        30_000,
        250,
      );
      expect(dead).toMatchObject({ kind: 'mail', attempts: 3, organizationName: null });
      expect(dead.lastError).toContain('mailbox unavailable');
      expect(JSON.stringify(dead)).not.toMatch(/Secret subject|nobody else/);

      // Only administrators see or retry them; bad input is a validation error, not a 500.
      const { email } = await createTestUser(server.deps, {
        accountId: tenant.accountId,
        permission: ALL_PERMISSIONS & ~1,
      });
      const member = await loggedIn(server.baseUrl, email);
      expect((await member.call('admin.job_failed_list')).status).toBe(404);
      expect((await member.call('admin.job_retry', { kind: 'mail', jobID: dead.jobID })).status).toBe(404);
      const bad = await admin.call('admin.job_retry', { kind: 'fax', jobID: 'nope' });
      expect(bad.status).toBe(400);
      expect(bad.body.invalids).toEqual({ kind: ['validation.invalid'], jobID: ['validation.invalid'] });

      refusing = false;
      expect((await admin.call('admin.job_retry', { kind: 'mail', jobID: dead.jobID })).status).toBe(200);
      await until('the retried mail delivered', async () => (smtp.received.length > 0 ? true : undefined));
      expect((await deadLetters()).some((job) => job.jobID === dead.jobID)).toBe(false);
      const again = await admin.call('admin.job_retry', { kind: 'mail', jobID: dead.jobID });
      expect(again.status).toBe(404);
      expect(again.body).toEqual({ error: 'not found' });
    } finally {
      await smtp.close();
    }
  });
});
