import { withAuditTrail } from '../services/audit-trail.ts';
import { authHandlers } from './auth.ts';
import { cacheHandlers } from './cache.ts';
import { channelHandlers } from './channels.ts';
import type { Handlers } from './context.ts';
import { helpHandlers } from './help.ts';
import { jobHandlers } from './jobs.ts';
import { organizationHandlers } from './organizations.ts';
import { originHandlers } from './origins.ts';
import { previewHandlers } from './preview.ts';
import { statisticsHandlers } from './statistics.ts';
import { statusHandlers } from './status.ts';
import { tokenHandlers } from './tokens.ts';
import { twoStepHandlers } from './two-step.ts';
import { userHandlers } from './users.ts';

/**
 * Every implemented operation; the contract's others answer 'not implemented'. Configuration
 * changes record themselves in the audit trail, whichever API dispatches them.
 */
export const handlers: Handlers = withAuditTrail({
  ...authHandlers,
  ...organizationHandlers,
  ...originHandlers,
  ...userHandlers,
  ...tokenHandlers,
  ...twoStepHandlers,
  ...statusHandlers,
  ...statisticsHandlers,
  ...cacheHandlers,
  ...helpHandlers,
  ...channelHandlers,
  ...previewHandlers,
  ...jobHandlers,
});
