import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { Db } from '../db/database.ts';
import { Invalidations } from '../services/invalidations.ts';
import type { TokenPrincipal } from './api-tokens.ts';
import { SessionStore, type AuthContext } from './session-store.ts';

// resolveToken touches no database of its own: the token and its caller come from its callbacks.
const POLICY = { idleMs: 60_000, absoluteMs: 3_600_000 };
const principal: TokenPrincipal = {
  limitKey: '7',
  organizationId: 3,
  isLive: false,
  permission: null,
  token: { id: 7, name: 'ci', createdBy: 5 },
};
const caller = { user: { id: 5 }, organization: { id: 3 } } as AuthContext;

const opened: Invalidations[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((invalidations) => invalidations.close()));
});

function store(invalidations = new Invalidations()) {
  const clock = { now: 1_000_000 };
  const sessions = new SessionStore({} as Db, POLICY, () => clock.now, invalidations);
  const reads = { tokens: 0, callers: 0 };
  const resolve = () =>
    sessions.resolveToken(
      'digest',
      async () => {
        reads.tokens++;
        return principal;
      },
      async () => {
        reads.callers++;
        return caller;
      },
    );
  return { sessions, clock, reads, resolve };
}

describe('SessionStore.resolveToken', () => {
  it('answers from memory for a few seconds', async () => {
    const { clock, reads, resolve } = store();
    expect(await resolve()).toEqual({ principal, caller });
    await resolve();
    expect(reads).toEqual({ tokens: 1, callers: 1 });
    clock.now += 5_001;
    await resolve();
    expect(reads).toEqual({ tokens: 2, callers: 2 });
  });

  it('reads again after the token, its creator or its organization changed', async () => {
    const { sessions, reads, resolve } = store();
    await resolve();
    await sessions.invalidate({ tokenId: 8 });
    await sessions.invalidate({ userId: 6 });
    await resolve();
    expect(reads.tokens).toBe(1);
    for (const event of [{ tokenId: 7 }, { userId: 5 }, { organizationId: 3 }]) {
      await sessions.invalidate(event);
      await resolve();
    }
    expect(reads.tokens).toBe(4);
  });

  it('keeps nothing read while an invalidation came in: the read may predate the change', async () => {
    const { sessions, reads } = store();
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const slow = sessions.resolveToken(
      'digest',
      async () => {
        await held;
        return principal;
      },
      async () => caller,
    );
    await sessions.invalidate({ tokenId: 7 });
    release();
    await slow;
    await sessions.resolveToken(
      'digest',
      async () => {
        reads.tokens++;
        return principal;
      },
      async () => caller,
    );
    expect(reads.tokens).toBe(1);
  });

  it('reads the token on every call while invalidations cannot reach this process, keeping its caller', async () => {
    // Never started (as in an edge process): not subscribed, so never live.
    const away = new Invalidations({
      redisUrl: 'redis://127.0.0.1:1',
      log: pino({ level: 'silent' }),
      timeoutMs: 100,
    });
    opened.push(away);
    const { reads, resolve } = store(away);
    await resolve();
    await resolve();
    expect(reads).toEqual({ tokens: 2, callers: 1 });
  });
});
