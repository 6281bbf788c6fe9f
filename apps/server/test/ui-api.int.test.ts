import {
  ALL_MEMBER_PERMISSIONS,
  ALL_PERMISSIONS,
  API_VERSION,
  operations,
  Permission,
} from '@ukiyo/contract';
import { beforeAll, describe, expect, it } from 'vitest';
import { LOGIN_PER_ACCOUNT_AND_ADDRESS, LOGIN_PER_ADDRESS } from '../src/operations/auth.ts';
import { Client, createTenant, createTestUser, PASSWORD, testServer, type TestServer } from './harness.ts';

let server: TestServer;
beforeAll(async () => {
  server = await testServer();
});

async function raw(path: string, init: RequestInit = {}) {
  const response = await fetch(`${server.baseUrl}${path}`, init);
  return { status: response.status, body: (await response.json()) as { error?: string } };
}

/** An address of its own per test: the worker's limits outlive a test. */
const randomAddress = (prefix: string) => `${prefix}.${1 + Math.floor(Math.random() * 250)}`;

const XHR = { 'X-Requested-With': 'XMLHttpRequest', 'Content-Type': 'application/json' };

describe('dispatcher transport rules', () => {
  it('answers every other method with a JSON 405', async () => {
    for (const method of ['GET', 'PUT', 'DELETE']) {
      const result = await raw(`/.ui-api/user.whoami?api-version=${API_VERSION}`, { method, headers: XHR });
      expect(result).toEqual({ status: 405, body: { error: 'method not allowed' } });
    }
  });

  it('refuses a missing X-Requested-With header', async () => {
    const result = await raw(`/.ui-api/user.whoami?api-version=${API_VERSION}`, {
      method: 'POST',
      body: '{}',
    });
    expect(result).toEqual({ status: 400, body: { error: 'missing X-Requested-With header' } });
  });

  it('refuses a cross-site Origin and cross-site fetch metadata', async () => {
    const path = `/.ui-api/user.whoami?api-version=${API_VERSION}`;
    const evil = await raw(path, { method: 'POST', headers: { ...XHR, Origin: 'https://evil.example' } });
    expect(evil).toEqual({ status: 400, body: { error: 'cross-site request refused' } });
    const site = await raw(path, { method: 'POST', headers: { ...XHR, 'Sec-Fetch-Site': 'cross-site' } });
    expect(site.body.error).toBe('cross-site request refused');
    const own = await raw(path, { method: 'POST', headers: { ...XHR, Origin: server.baseUrl } });
    expect(own.status).toBe(200);
  });

  it('refuses another api-version and an unknown operation', async () => {
    const version = await raw('/.ui-api/user.whoami?api-version=2.28', { method: 'POST', headers: XHR });
    expect(version).toEqual({ status: 400, body: { error: 'unsupported api version' } });
    const missing = await raw('/.ui-api/user.whoami', { method: 'POST', headers: XHR });
    expect(missing.status).toBe(400);
    const unknown = await raw(`/.ui-api/user.nothing?api-version=${API_VERSION}`, {
      method: 'POST',
      headers: XHR,
    });
    expect(unknown).toEqual({ status: 404, body: { error: 'unknown operation' } });
    const proto = await raw(`/.ui-api/__proto__?api-version=${API_VERSION}`, {
      method: 'POST',
      headers: XHR,
    });
    expect(proto.body.error).toBe('unknown operation');
  });

  it('answers a malformed body and schema failures with clear errors', async () => {
    const client = new Client(server.baseUrl);
    const malformed = await client.call('auth.login', '{"emailAddress":');
    expect(malformed).toMatchObject({ status: 400, body: { error: 'malformed request body' } });
    const invalid = await client.call('auth.login', { emailAddress: 'not-an-address', password: '' });
    expect(invalid.status).toBe(400);
    expect(invalid.body).toEqual({
      error: 'validation error',
      invalids: { emailAddress: ['validation.email'], password: ['validation.required'] },
    });
    const wrongShape = await client.call('auth.login', '[1,2]');
    expect(wrongShape.body).toEqual({
      error: 'validation error',
      invalids: { root: ['validation.invalid'] },
    });
    const missing = await client.call('auth.login', {});
    expect(missing.body.invalids).toEqual({
      emailAddress: ['validation.required'],
      password: ['validation.required'],
    });
  });

  it('never answers 500 to any operation called with junk', async () => {
    const client = new Client(server.baseUrl);
    const tenant = await createTenant(server.deps);
    const user = await createTestUser(server.deps, {
      accountId: tenant.accountId,
      permission: ALL_MEMBER_PERMISSIONS,
    });
    await client.login(user.email, PASSWORD);
    for (const name of Object.keys(operations)) {
      if (name === 'auth.logout') continue;
      for (const body of ['{}', '"x"', '{"a":{"b":[null]}}', 'null']) {
        const result = await client.call(name, body);
        expect(result.status, `${name} ${body}`).not.toBe(500);
        expect(typeof result.body.error === 'string' || result.status === 200, name).toBe(true);
      }
    }
  });

  it('answers 403 only when there is no valid session', async () => {
    const client = new Client(server.baseUrl);
    const result = await client.call('organization.list');
    expect(result).toMatchObject({ status: 403, body: { error: 'session is invalid' } });
    client.cookie = 'ukiyo_session=forged-token-value';
    const forged = await client.call('organization.list');
    expect(forged.status).toBe(403);
  });
});

describe('login, whoami, logout', () => {
  it('logs in with a HttpOnly SameSite=Lax cookie, answers whoami, and logout destroys the session', async () => {
    const tenant = await createTenant(server.deps);
    const user = await createTestUser(server.deps, {
      accountId: tenant.accountId,
      permission: ALL_MEMBER_PERMISSIONS,
    });
    const client = new Client(server.baseUrl);

    const anonymous = await client.call('user.whoami');
    expect(anonymous.body).toEqual({ user: null, organization: null });
    expect(anonymous.headers.get('x-content-type-options')).toBe('nosniff');
    expect(anonymous.headers.get('x-frame-options')).toBe('DENY');

    const login = await client.login(user.email.toUpperCase(), PASSWORD);
    expect(login.status).toBe(200);
    const cookie = login.headers.getSetCookie().at(-1)!;
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Lax/);
    expect(cookie).not.toMatch(/Secure/);
    expect(login.body).toMatchObject({
      user: { emailAddress: user.email, permission: ALL_MEMBER_PERMISSIONS },
      organization: { organizationID: tenant.organizationIds[0], memberCode: tenant.memberCode },
      totpRequired: false,
    });
    expect(JSON.stringify(login.body)).not.toMatch(/password|hash/i);

    const whoami = await client.call('user.whoami');
    expect(whoami.body).toMatchObject({
      user: { userID: user.userId },
      organization: { organizationID: tenant.organizationIds[0] },
    });

    const stolen = client.cookie;
    expect((await client.call('auth.logout')).status).toBe(200);
    const replay = new Client(server.baseUrl);
    replay.cookie = stolen;
    expect((await replay.call('organization.list')).status).toBe(403);
    expect((await replay.call('user.whoami')).body).toEqual({ user: null, organization: null });
  });

  it('rotates the session id at login: the cookie the browser came with is destroyed', async () => {
    const tenant = await createTenant(server.deps);
    const user = await createTestUser(server.deps, {
      accountId: tenant.accountId,
      permission: ALL_MEMBER_PERMISSIONS,
    });
    const client = new Client(server.baseUrl);
    await client.login(user.email, PASSWORD);
    const first = client.cookie;
    await client.login(user.email, PASSWORD);
    expect(client.cookie).not.toBe(first);
    const old = new Client(server.baseUrl);
    old.cookie = first;
    expect((await old.call('organization.list')).status).toBe(403);
    expect((await client.call('organization.list')).status).toBe(200);
  });

  it('sets Secure behind an HTTPS proxy', async () => {
    const tenant = await createTenant(server.deps);
    const user = await createTestUser(server.deps, {
      accountId: tenant.accountId,
      permission: ALL_MEMBER_PERMISSIONS,
    });
    const proxied = new Client(await server.withConfig({ TRUST_PROXY: true }));
    const login = await proxied.call(
      'auth.login',
      { emailAddress: user.email, password: PASSWORD },
      { headers: { 'X-Forwarded-Proto': 'https', 'X-Forwarded-For': '203.0.113.9' } },
    );
    expect(login.headers.getSetCookie().at(-1)).toMatch(/Secure/);
  });

  it('gives a wrong e-mail and a wrong password the same answer, and long passwords their own', async () => {
    const tenant = await createTenant(server.deps);
    const user = await createTestUser(server.deps, {
      accountId: tenant.accountId,
      permission: ALL_MEMBER_PERMISSIONS,
    });
    const client = new Client(server.baseUrl);
    const wrongPassword = await client.login(user.email, 'not-the-password');
    const wrongEmail = await client.login('nobody-here@example.com', PASSWORD);
    expect(wrongPassword).toMatchObject({ status: 400, body: { error: 'wrong email or password' } });
    expect(wrongEmail.body).toEqual(wrongPassword.body);
    const long = await client.login(user.email, 'x'.repeat(129));
    expect(long.body).toEqual({ error: 'password too long' });
  });

  it('refuses a disabled user like a wrong password', async () => {
    const tenant = await createTenant(server.deps);
    const user = await createTestUser(server.deps, {
      accountId: tenant.accountId,
      permission: ALL_MEMBER_PERMISSIONS,
      enabled: false,
    });
    const result = await new Client(server.baseUrl).login(user.email, PASSWORD);
    expect(result.body).toEqual({ error: 'wrong email or password' });
  });

  it('locks an account only for the address its wrong passwords came from, never for the owner elsewhere', async () => {
    const tenant = await createTenant(server.deps);
    const user = await createTestUser(server.deps, {
      accountId: tenant.accountId,
      permission: ALL_MEMBER_PERMISSIONS,
    });
    const other = await createTestUser(server.deps, {
      accountId: tenant.accountId,
      permission: ALL_MEMBER_PERMISSIONS,
    });
    const client = new Client(await server.withConfig({ TRUST_PROXY: true }));
    const [attacker, owner] = [randomAddress('198.51.100'), randomAddress('203.0.113')];
    const login = (email: string, password: string, address: string) =>
      client.call(
        'auth.login',
        { emailAddress: email, password },
        { headers: { 'X-Forwarded-For': address } },
      );
    const failFive = async () => {
      for (let i = 0; i < 5; i++)
        expect((await login(user.email, 'wrong-password', attacker)).body.error).toBe(
          'wrong email or password',
        );
    };

    await failFive();
    // The pair is locked, even with the right password; the same for an unknown e-mail would
    // look alike (one answer whether the account exists or not).
    const locked = await login(user.email, PASSWORD, attacker);
    expect(locked).toMatchObject({ status: 429, body: { error: 'too many attempts' } });
    expect(locked.headers.get('retry-after')).toBe('60');
    expect((await login(user.email, PASSWORD, owner)).status).toBe(200);
    expect((await login(other.email, PASSWORD, attacker)).status).toBe(200);

    // When the lock ends (its counter dropped here instead of waiting a minute), five more
    // failures lock the pair for twice as long.
    await server.deps.limits
      .limiter('login:account-address', LOGIN_PER_ACCOUNT_AND_ADDRESS)
      .delete(`${user.email} ${attacker}`);
    await failFive();
    const longer = await login(user.email, PASSWORD, attacker);
    expect(longer.status).toBe(429);
    expect(longer.headers.get('retry-after')).toBe('120');
    expect((await login(user.email, PASSWORD, owner)).status).toBe(200);
  });

  it('locks a client address that tries many e-mail addresses, and only that address', async () => {
    const tenant = await createTenant(server.deps);
    const user = await createTestUser(server.deps, {
      accountId: tenant.accountId,
      permission: ALL_MEMBER_PERMISSIONS,
    });
    const client = new Client(await server.withConfig({ TRUST_PROXY: true }));
    const [spraying, elsewhere] = [randomAddress('192.0.2'), randomAddress('198.18.0')];
    const from = (address: string) => ({ headers: { 'X-Forwarded-For': address } });
    for (let i = 0; i < LOGIN_PER_ADDRESS.points; i++) {
      const guess = { emailAddress: `spray${i}@example.com`, password: 'guess' };
      expect((await client.call('auth.login', guess, from(spraying))).status).toBe(400);
    }
    const locked = await client.call(
      'auth.login',
      { emailAddress: user.email, password: PASSWORD },
      from(spraying),
    );
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get('retry-after'))).toBe(LOGIN_PER_ADDRESS.firstLockSeconds);
    const owner = await client.call(
      'auth.login',
      { emailAddress: user.email, password: PASSWORD },
      from(elsewhere),
    );
    expect(owner.status).toBe(200);
  });
});

describe('organizations and tenancy', () => {
  it('lists only the organizations of the user’s own account', async () => {
    const a = await createTenant(server.deps, { organizations: 2 });
    const b = await createTenant(server.deps);
    const user = await createTestUser(server.deps, {
      accountId: a.accountId,
      permission: ALL_MEMBER_PERMISSIONS,
    });
    const client = new Client(server.baseUrl);
    const login = await client.login(user.email, PASSWORD);
    expect(login.body.organization).toBeNull();
    const list = await client.call('organization.list');
    const ids = (list.body.organizations as { organizationID: number }[]).map((o) => o.organizationID);
    expect(ids).toEqual(a.organizationIds);
    expect(ids).not.toContain(b.organizationIds[0]);
  });

  it('changes to a reachable organization, never to a foreign one', async () => {
    const a = await createTenant(server.deps, { organizations: 2 });
    const b = await createTenant(server.deps);
    const user = await createTestUser(server.deps, {
      accountId: a.accountId,
      permission: ALL_MEMBER_PERMISSIONS,
    });
    const client = new Client(server.baseUrl);
    await client.login(user.email, PASSWORD);
    const foreign = await client.call('auth.change_organization', { organizationID: b.organizationIds[0] });
    expect(foreign).toMatchObject({ status: 404, body: { error: 'not found' } });
    const own = await client.call('auth.change_organization', { organizationID: a.organizationIds[1] });
    expect(own.body).toMatchObject({ organization: { organizationID: a.organizationIds[1] } });
    expect((await client.call('user.whoami')).body).toMatchObject({
      organization: { organizationID: a.organizationIds[1] },
    });

    // The next login starts in the organization used last.
    const again = new Client(server.baseUrl);
    expect((await again.login(user.email, PASSWORD)).body).toMatchObject({
      organization: { organizationID: a.organizationIds[1] },
    });
  });

  it('keeps a restricted user inside their restriction', async () => {
    const a = await createTenant(server.deps, { organizations: 3 });
    const user = await createTestUser(server.deps, {
      accountId: a.accountId,
      permission: ALL_MEMBER_PERMISSIONS,
      restrictedTo: [a.organizationIds[2]!],
    });
    const client = new Client(server.baseUrl);
    const login = await client.login(user.email, PASSWORD);
    expect(login.body).toMatchObject({ organization: { organizationID: a.organizationIds[2] } });
    const list = await client.call('organization.list');
    expect((list.body.organizations as unknown[]).length).toBe(1);
    const outside = await client.call('auth.change_organization', { organizationID: a.organizationIds[0] });
    expect(outside.status).toBe(404);
  });

  it('lets administrators reach every organization', async () => {
    const a = await createTenant(server.deps);
    const b = await createTenant(server.deps);
    const admin = await createTestUser(server.deps, { accountId: null, permission: ALL_PERMISSIONS });
    const client = new Client(server.baseUrl);
    await client.login(admin.email, PASSWORD);
    const list = await client.call('organization.list');
    const ids = (list.body.organizations as { organizationID: number }[]).map((o) => o.organizationID);
    expect(ids).toEqual(expect.arrayContaining([a.organizationIds[0], b.organizationIds[0]]));
    expect(
      (await client.call('auth.change_organization', { organizationID: b.organizationIds[0] })).status,
    ).toBe(200);
  });
});

describe('access rules from the contract', () => {
  it('sends a user who is not activated to activation, but answers whoami', async () => {
    const tenant = await createTenant(server.deps);
    const user = await createTestUser(server.deps, {
      accountId: tenant.accountId,
      permission: ALL_MEMBER_PERMISSIONS,
      activated: false,
    });
    const client = new Client(server.baseUrl);
    expect((await client.login(user.email, PASSWORD)).status).toBe(200);
    expect((await client.call('user.whoami')).body).toMatchObject({ user: { activatedAt: null } });
    expect(await client.call('organization.list')).toMatchObject({
      status: 412,
      body: { error: 'not activated' },
    });
  });

  it('refuses operations needing a permission bit the user lacks', async () => {
    const tenant = await createTenant(server.deps);
    const user = await createTestUser(server.deps, {
      accountId: tenant.accountId,
      permission: Permission.statistics,
    });
    const client = new Client(server.baseUrl);
    await client.login(user.email, PASSWORD);
    expect(await client.call('origin.list')).toMatchObject({
      status: 404,
      body: { error: 'not enough permission' },
    });
    expect((await client.call('admin.list_organizations')).body.error).toBe('not enough permission');
  });

  it('refuses image operations in a live organization', async () => {
    const tenant = await createTenant(server.deps, { isLive: true });
    const user = await createTestUser(server.deps, {
      accountId: tenant.accountId,
      permission: ALL_MEMBER_PERMISSIONS,
    });
    const client = new Client(server.baseUrl);
    await client.login(user.email, PASSWORD);
    expect((await client.call('origin.list')).body.error).toBe('image not available');
  });

  it('needs a current organization for organization operations', async () => {
    const tenant = await createTenant(server.deps, { organizations: 2 });
    const user = await createTestUser(server.deps, {
      accountId: tenant.accountId,
      permission: ALL_MEMBER_PERMISSIONS,
    });
    const client = new Client(server.baseUrl);
    await client.login(user.email, PASSWORD);
    expect(await client.call('organization.plan_features')).toMatchObject({
      status: 412,
      body: { error: 'organization not selected' },
    });
  });
});
