import { listDeadLetters } from '../db/repositories/dead-letters.ts';
import { AppError } from '../http/app-error.ts';
import { rotateWebhookSecret, webhookSecretCreatedAt } from '../services/webhook-secrets.ts';
import { organizationOf, type Handlers } from './context.ts';

export const jobHandlers: Handlers = {
  'admin.job_failed_list': async (_input, context) => ({
    jobs: await listDeadLetters(context.deps.db, 200),
  }),

  'admin.job_retry': async ({ kind, jobID }, context) => {
    if (!(await context.deps.jobs.retry(kind, jobID))) throw new AppError('not found');
    return {};
  },

  'organization.webhook_secret': async (_input, context) => {
    const createdAt = await webhookSecretCreatedAt(context.deps.db, organizationOf(context).id);
    return { createdAt: createdAt?.toISOString() ?? null };
  },

  'organization.rotate_webhook_secret': async (_input, context) => {
    const { secret, createdAt } = await rotateWebhookSecret(
      context.deps.db,
      context.deps.secrets,
      organizationOf(context).id,
    );
    return { secret, createdAt: createdAt.toISOString() };
  },
};
