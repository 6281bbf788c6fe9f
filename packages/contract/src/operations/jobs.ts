import { z } from 'zod';
import { operation } from '../operation.ts';
import { Permission } from '../permissions.ts';
import { empty } from '../validation.ts';

/** The kinds of durable work the servers queue (`apps/server/src/jobs/queue.ts`). */
export const JOB_KINDS = ['webhook', 'archive-upload', 'mail'] as const;
export type JobKind = (typeof JOB_KINDS)[number];

/** A job that failed its last attempt: what administrators may see of it, never its payload. */
export const DeadLetter = z.object({
  jobID: z.string(),
  kind: z.enum(JOB_KINDS),
  /** The receiving host (a webhook's, an archive bucket's, a mail's domain). */
  target: z.string(),
  organizationName: z.string().nullable(),
  attempts: z.number(),
  lastError: z.string(),
  failedAt: z.string(),
});
export type DeadLetter = z.infer<typeof DeadLetter>;

export const jobOperations = {
  'admin.job_failed_list': operation('admin.job_failed_list', {
    input: empty(),
    output: z.object({ jobs: z.array(DeadLetter) }),
    access: 'activated',
    adminOnly: true,
  }),
  /** One more attempt of a dead letter; `not found` when it is no longer failed. */
  'admin.job_retry': operation('admin.job_retry', {
    input: z.object({
      kind: z.enum(JOB_KINDS, { error: 'validation.invalid' }),
      jobID: z.uuid({ error: 'validation.invalid' }),
    }),
    output: z.object({}),
    access: 'activated',
    adminOnly: true,
  }),
  /** Whether the organization's webhook signing secret exists, and since when; never the secret. */
  'organization.webhook_secret': operation('organization.webhook_secret', {
    input: empty(),
    output: z.object({ createdAt: z.string().nullable() }),
    access: 'organization',
    permission: Permission.organization,
    organizationKind: 'live',
  }),
  /** A new signing secret (`whsec_…`), the only answer that carries it; the old one stops at once. */
  'organization.rotate_webhook_secret': operation('organization.rotate_webhook_secret', {
    input: empty(),
    output: z.object({ secret: z.string(), createdAt: z.string() }),
    access: 'organization',
    permission: Permission.organization,
    organizationKind: 'live',
  }),
};
