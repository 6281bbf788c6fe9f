import { isDeepStrictEqual } from 'node:util';
import { randomToken, tokenDigest } from '../crypto/tokens.ts';
import type { Db } from '../db/database.ts';
import { findReachableOrganization, type OrganizationRecord } from '../db/repositories/organizations.ts';
import type { Scope } from '../db/repositories/scope.ts';
import { accountOf, findUserById, scopeOf, userRestrictions } from '../db/repositories/users.ts';
import type { SakuraAccountRow, UserRow } from '../db/tables.ts';
import { Invalidations, type Invalidation } from '../services/invalidations.ts';
import type { TokenPrincipal } from './api-tokens.ts';

export interface AuthContext {
  sessionHash: string;
  secondFactorPending: boolean;
  user: UserRow;
  account: SakuraAccountRow | null;
  restrictedTo: number[];
  organization: OrganizationRecord | null;
  scope: Scope;
}

/** An API token as the bearer check reads it, and its caller (undefined: the creator may not act). */
export interface TokenCaller {
  principal: TokenPrincipal;
  caller: AuthContext | undefined;
}

interface CachedSession {
  context: AuthContext;
  /** Set on an API token's entry (keyed by its digest), whose caller is `context`. */
  principal?: TokenPrincipal;
  lastSeenAt: number;
  expiresAt: number;
  loadedAt: number;
}

export interface SessionPolicy {
  idleMs: number;
  absoluteMs: number;
}

/** How long a resolved session is answered from memory before the database is asked again. */
const CACHE_TTL_MS = 5_000;
const CACHE_MAX_ENTRIES = 10_000;
/** last_seen_at is written at most this often, not on every request. */
const TOUCH_INTERVAL_MS = 60_000;

/**
 * Server-side sessions in the database. The cookie holds a random token; the table holds only
 * its hash. Resolved sessions are kept in memory for a few seconds because every console call
 * needs one; `invalidate` drops the affected entries at once in every process (Invalidations).
 */
export class SessionStore {
  private readonly cache = new Map<string, CachedSession>();
  /**
   * Counts invalidations: an entry loaded while one happened is not kept, as it may have been
   * read just before the change it missed.
   */
  private generation = 0;

  constructor(
    private readonly db: Db,
    private readonly policy: SessionPolicy,
    private readonly now: () => number = Date.now,
    private readonly invalidations = new Invalidations(),
  ) {
    invalidations.on((event) => this.drop(event));
  }

  async create(values: {
    userId: number;
    organizationId: number | null;
    secondFactorPending: boolean;
    ip: string;
    userAgent: string;
  }): Promise<{ token: string; expiresAt: Date }> {
    const token = randomToken();
    const expiresAt = new Date(this.now() + this.policy.absoluteMs);
    await this.db
      .insertInto('sessions')
      .values({
        id_hash: tokenDigest(token),
        user_id: values.userId,
        organization_id: values.organizationId,
        second_factor_pending: values.secondFactorPending,
        expires_at: expiresAt,
        ip: values.ip,
        user_agent: values.userAgent.slice(0, 512),
      })
      .execute();
    return { token, expiresAt };
  }

  async resolve(token: string | undefined): Promise<AuthContext | null> {
    if (!token || token.length > 100) return null;
    const hash = tokenDigest(token);
    const now = this.now();
    let entry = this.cache.get(hash);
    if (!entry || now - entry.loadedAt > CACHE_TTL_MS) {
      const generation = this.generation;
      entry = await this.load(hash, now);
      if (!entry) {
        this.cache.delete(hash);
        return null;
      }
      if (generation === this.generation) this.remember(hash, entry);
    }
    if (now > entry.expiresAt || now - entry.lastSeenAt > this.policy.idleMs) {
      await this.destroyByHash(hash);
      return null;
    }
    if (now - entry.lastSeenAt > TOUCH_INTERVAL_MS) {
      entry.lastSeenAt = now;
      await this.db
        .updateTable('sessions')
        .set({ last_seen_at: new Date(now) })
        .where('id_hash', '=', hash)
        .execute();
    }
    return entry.context;
  }

  /**
   * An API token (by its secret's digest) and its caller, kept in the same cache as sessions: the
   * same few seconds, dropped by the same invalidations (a user disabled or changed, an
   * organization changed) and by the token's own (disabled, revoked), in every process. While
   * an invalidation could be missed (Invalidations.live is false) the token is read on every
   * call, as it was before it was kept, and only its caller is kept.
   */
  async resolveToken(
    digest: string,
    find: () => Promise<TokenPrincipal | undefined>,
    callerOf: (principal: TokenPrincipal) => Promise<AuthContext | undefined>,
  ): Promise<TokenCaller | undefined> {
    const key = `api-token:${digest}`;
    const now = this.now();
    const entry = this.cache.get(key);
    const kept = entry?.principal && now - entry.loadedAt <= CACHE_TTL_MS ? entry.principal : undefined;
    if (kept && this.invalidations.live) return { principal: kept, caller: entry!.context };
    const generation = this.generation;
    const principal = await find();
    if (!principal) {
      this.cache.delete(key);
      return undefined;
    }
    if (kept && isDeepStrictEqual(kept, principal)) return { principal, caller: entry!.context };
    const caller = await callerOf(principal);
    if (caller && generation === this.generation)
      this.remember(key, { context: caller, principal, lastSeenAt: now, expiresAt: Infinity, loadedAt: now });
    else this.cache.delete(key);
    return { principal, caller };
  }

  async destroy(token: string | undefined): Promise<void> {
    if (token) await this.destroyByHash(tokenDigest(token));
  }

  async setOrganization(context: AuthContext, organizationId: number): Promise<void> {
    await this.db
      .updateTable('sessions')
      .set({ organization_id: organizationId })
      .where('id_hash', '=', context.sessionHash)
      .execute();
    await this.invalidate({ sessionHash: context.sessionHash });
  }

  async completeSecondFactor(context: AuthContext): Promise<void> {
    await this.db
      .updateTable('sessions')
      .set({ second_factor_pending: false })
      .where('id_hash', '=', context.sessionHash)
      .execute();
    await this.invalidate({ sessionHash: context.sessionHash });
  }

  /** Ends every session of a user (disabled, password changed), optionally keeping one. */
  async destroyUserSessions(userId: number, except?: string): Promise<void> {
    let query = this.db.deleteFrom('sessions').where('user_id', '=', userId);
    if (except) query = query.where('id_hash', '!=', except);
    await query.execute();
    await this.invalidate({ userId });
  }

  /**
   * Drops cached sessions and API tokens after a change to a user, an organization, an API
   * token or one session, in every process (resolved once each has).
   */
  invalidate(event: SessionInvalidation): Promise<void> {
    return this.invalidations.publish(event);
  }

  private drop(event: Invalidation | 'everything'): void {
    this.generation++;
    if (event === 'everything') return this.cache.clear();
    for (const [hash, entry] of this.cache) {
      if (
        hash === event.sessionHash ||
        (event.userId !== undefined && entry.context.user.id === event.userId) ||
        (event.organizationId !== undefined && entry.context.organization?.id === event.organizationId) ||
        (event.tokenId !== undefined && entry.principal?.token?.id === event.tokenId)
      ) {
        this.cache.delete(hash);
      }
    }
  }

  async deleteExpired(): Promise<number> {
    const now = new Date(this.now());
    const idleCutoff = new Date(this.now() - this.policy.idleMs);
    const result = await this.db
      .deleteFrom('sessions')
      .where((eb) => eb.or([eb('expires_at', '<', now), eb('last_seen_at', '<', idleCutoff)]))
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  private async destroyByHash(hash: string): Promise<void> {
    await this.db.deleteFrom('sessions').where('id_hash', '=', hash).execute();
    await this.invalidate({ sessionHash: hash });
  }

  private async load(hash: string, now: number): Promise<CachedSession | undefined> {
    const session = await this.db
      .selectFrom('sessions')
      .selectAll()
      .where('id_hash', '=', hash)
      .executeTakeFirst();
    if (!session) return undefined;
    const user = await findUserById(this.db, session.user_id);
    if (!user || !user.enabled) return undefined;
    return {
      context: await authContextOf(this.db, user, session.organization_id, {
        sessionHash: hash,
        secondFactorPending: session.second_factor_pending,
      }),
      lastSeenAt: session.last_seen_at.getTime(),
      expiresAt: session.expires_at.getTime(),
      loadedAt: now,
    };
  }

  private remember(hash: string, entry: CachedSession): void {
    this.cache.delete(hash);
    this.cache.set(hash, entry);
    if (this.cache.size > CACHE_MAX_ENTRIES) {
      const oldest = this.cache.keys().next().value;
      if (oldest !== undefined) this.cache.delete(oldest);
    }
  }
}

/**
 * What `user` may do in `organizationId` (null: none chosen): their account, restrictions and
 * scope, with the organization only while it is still within their reach. Sessions build it on
 * every load, API tokens for their creator on every call.
 */
export async function authContextOf(
  db: Db,
  user: UserRow,
  organizationId: number | null,
  session: Pick<AuthContext, 'sessionHash' | 'secondFactorPending'>,
): Promise<AuthContext> {
  const restrictedTo = await userRestrictions(db, user.id);
  const account = await accountOf(db, user);
  const scope = scopeOf(user, restrictedTo);
  // Re-checked on every load: a restriction added since login takes the organization away.
  const organization =
    organizationId === null ? null : ((await findReachableOrganization(db, scope, organizationId)) ?? null);
  return { ...session, user, account, restrictedTo, organization, scope };
}

export type SessionInvalidation = Pick<Invalidation, 'sessionHash' | 'userId' | 'organizationId' | 'tokenId'>;
