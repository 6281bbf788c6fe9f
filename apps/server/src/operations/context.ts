import type { OperationName, OperationOutput, OperationParsedInput, Operations } from '@ukiyo/contract';
import type { Logger } from 'pino';
import type { RateLimits } from '../auth/rate-limits.ts';
import type { AuthContext, SessionStore } from '../auth/session-store.ts';
import type { Config } from '../config.ts';
import type { SecretBox } from '../crypto/secret-box.ts';
import type { JobQueue } from '../jobs/queue.ts';
import type { Mailer } from '../mail/mailer.ts';
import type { CacheControl } from '../services/cache.ts';
import type { Invalidations } from '../services/invalidations.ts';
import type { OriginLists } from '../services/origin-lists.ts';
import type { Db } from '../db/database.ts';
import { AppError } from '../http/app-error.ts';

/** What every handler may use; built once per process by createServerApp. */
export interface ServerDeps {
  config: Config;
  db: Db;
  sessions: SessionStore;
  /** Tells every console process of a change to what they keep in memory (sessions, tokens, origins). */
  invalidations: Invalidations;
  /** Each organization's presented origins (origin.list), kept for a second. */
  originLists: OriginLists<OperationOutput<Operations['origin.list']>>;
  limits: RateLimits;
  secrets: SecretBox;
  mailer: Mailer;
  /** Durable work: webhooks, archive uploads, mail (workers are started by the entry points). */
  jobs: JobQueue;
  log: Logger;
  /** The image edge's cache, when an edge runs in this process (`npm start`). */
  cacheControl?: CacheControl;
}

export interface RequestInfo {
  ip: string;
  userAgent: string;
}

export interface OperationContext {
  deps: ServerDeps;
  /** The caller's session; null only reaches handlers of public operations. */
  auth: AuthContext | null;
  request: RequestInfo;
  /** The API token a `/api/v1` call came with (its user is `auth.user`); absent for console sessions. */
  apiToken?: { id: number; name: string };
  /** Starts a new session (a fresh id: never the one the browser came with) and sets its cookie. */
  startSession(values: {
    userId: number;
    organizationId: number | null;
    secondFactorPending: boolean;
  }): Promise<void>;
  /** Destroys the current session, if any, and clears the cookie. */
  endSession(): Promise<void>;
}

export type Handler<N extends OperationName> = (
  input: OperationParsedInput<Operations[N]>,
  context: OperationContext,
) => Promise<OperationOutput<Operations[N]>>;

export type Handlers = { [N in OperationName]?: Handler<N> };

/** The session of an operation whose access level guarantees one (the dispatcher checked). */
export function authOf(context: OperationContext): AuthContext {
  if (!context.auth) throw new AppError('session is invalid');
  return context.auth;
}

/** The current organization of an operation with access 'organization'. */
export function organizationOf(context: OperationContext) {
  const organization = authOf(context).organization;
  if (!organization) throw new AppError('organization not selected');
  return organization;
}
