import { ALL_MEMBER_PERMISSIONS } from '@ukiyo/contract';
import { beforeAll, describe, expect, it } from 'vitest';
import { SessionStore } from '../src/auth/session-store.ts';
import { createTenant, createTestUser, testServer, type TestServer } from './harness.ts';

let server: TestServer;
beforeAll(async () => {
  server = await testServer();
});

const MINUTE = 60_000;

async function storeWithClock() {
  const clock = { now: Date.now() };
  const store = new SessionStore(
    server.deps.db,
    { idleMs: 30 * MINUTE, absoluteMs: 8 * 60 * MINUTE },
    () => clock.now,
  );
  const tenant = await createTenant(server.deps);
  const user = await createTestUser(server.deps, {
    accountId: tenant.accountId,
    permission: ALL_MEMBER_PERMISSIONS,
  });
  const session = await store.create({
    userId: user.userId,
    organizationId: tenant.organizationIds[0]!,
    secondFactorPending: false,
    ip: '127.0.0.1',
    userAgent: 'test',
  });
  return { clock, store, token: session.token, user };
}

describe('session expiry', () => {
  it('ends a session left idle longer than the idle limit', async () => {
    const { clock, store, token } = await storeWithClock();
    clock.now += 29 * MINUTE;
    expect(await store.resolve(token)).not.toBeNull();
    clock.now += 31 * MINUTE;
    expect(await store.resolve(token)).toBeNull();
  });

  it('keeps an active session alive until the absolute limit, then ends it', async () => {
    const { clock, store, token } = await storeWithClock();
    for (let hour = 1; hour < 8; hour++) {
      clock.now += 20 * MINUTE;
      expect(await store.resolve(token), `after ${hour}`).not.toBeNull();
      clock.now += 20 * MINUTE;
      expect(await store.resolve(token)).not.toBeNull();
      clock.now += 20 * MINUTE;
      expect(await store.resolve(token)).not.toBeNull();
    }
    clock.now += 61 * MINUTE;
    expect(await store.resolve(token)).toBeNull();
  });

  it('stores only a hash of the session token', async () => {
    const { token } = await storeWithClock();
    const rows = await server.deps.db.selectFrom('sessions').select('id_hash').execute();
    expect(rows.some((row) => row.id_hash === token)).toBe(false);
  });

  it('drops every cached session of a user when that user’s sessions are destroyed', async () => {
    const { store, token, user } = await storeWithClock();
    expect(await store.resolve(token)).not.toBeNull();
    await store.destroyUserSessions(user.userId);
    expect(await store.resolve(token)).toBeNull();
  });

  it('sweeps expired sessions from the table', async () => {
    const { clock, store } = await storeWithClock();
    clock.now += 9 * 60 * MINUTE;
    expect(await store.deleteExpired()).toBeGreaterThan(0);
  });
});
