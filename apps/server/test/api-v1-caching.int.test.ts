import { ALL_MEMBER_PERMISSIONS, OriginKind, Permission } from '@ukiyo/contract';
import { beforeAll, describe, expect, it } from 'vitest';
import { ORIGIN_LIST_MAX_AGE_MS } from '../src/services/origin-lists.ts';
import {
  apiV1,
  loggedIn,
  memberAndManager,
  testServer,
  type ApiReply,
  type Client,
  type TestServer,
} from './harness.ts';
import { until } from './processes.ts';

// What /api/v1 keeps in memory (the token and its caller, each organization's origin list) never
// outlives a revocation or an edit: every call below comes straight after the change, with
// the entries warm.
let server: TestServer;
/**
 * The server behind a trusted proxy, and this file's own client address: the refusals below
 * count as bad tokens against the caller's address, and must not use up the budget of
 * 127.0.0.1, which every file of the integration run shares.
 */
let proxied: string;
const ADDRESS = '198.51.100.19';

const api = (method: string, path: string, token: string, body?: unknown) =>
  apiV1(proxied, method, path, token, body, { 'X-Forwarded-For': ADDRESS });

/** A member (every member bit) and a manager of the same organization, both logged in. */
async function organization() {
  const { organizationId, member, manager } = await memberAndManager(server.deps);
  return {
    organizationId,
    member: { ...member, client: await loggedIn(server.baseUrl, member.email) },
    manager: await loggedIn(server.baseUrl, manager.email),
  };
}

/** A token holding whatever its creator holds. */
async function issueToken(client: Client) {
  const added = await client.call('auth_token.add', { authToken: { description: 'ci', permission: null } });
  expect(added.status, JSON.stringify(added.body)).toBe(200);
  return {
    token: added.body.encodedToken as string,
    id: (added.body.authToken as { authTokenID: number }).authTokenID,
  };
}

/** Several calls, so the token, its caller and the origin list are all in memory. */
async function warm(token: string) {
  for (let i = 0; i < 3; i++) expect((await api('GET', '/origins', token)).status).toBe(200);
}

const httpOrigin = (description: string) => ({
  kind: OriginKind.http,
  description,
  config: { scheme: 'http', host: '127.0.0.1:9', pathPrefix: '', rewriteHost: '' },
});

const descriptions = (reply: ApiReply) =>
  reply.body.origins.map((o: { description: string }) => o.description);

beforeAll(async () => {
  server = await testServer();
  proxied = await server.withConfig({ TRUST_PROXY: true });
});

describe('tokens kept in memory', () => {
  it('refuses a token revoked or disabled in the console on the very next call', async () => {
    const { member } = await organization();
    const revoked = await issueToken(member.client);
    const disabled = await issueToken(member.client);
    await warm(revoked.token);
    await warm(disabled.token);
    expect((await member.client.call('auth_token.delete', { authTokenID: revoked.id })).status).toBe(200);
    expect(await api('GET', '/origins', revoked.token)).toMatchObject({
      status: 401,
      body: { error: 'api token invalid' },
    });
    expect((await member.client.call('auth_token.disable', { authTokenID: disabled.id })).status).toBe(200);
    expect((await api('GET', '/origins', disabled.token)).status).toBe(401);
  });

  it('refuses a token revoked through the API itself on the very next call', async () => {
    const { member } = await organization();
    const admin = await issueToken(member.client);
    const ci = await issueToken(member.client);
    await warm(ci.token);
    expect((await api('DELETE', `/tokens/${ci.id}`, admin.token)).status).toBe(204);
    expect((await api('GET', '/origins', ci.token)).status).toBe(401);
  });

  it('applies a creator’s narrowed permissions and disabling on the very next call', async () => {
    const { member, manager } = await organization();
    const { token } = await issueToken(member.client);
    await warm(token);
    const narrowed = await manager.call('user.update', {
      oldEmailAddress: member.email,
      emailAddress: member.email,
      fullName: 'Narrowed',
      permission: Permission.cache,
    });
    expect(narrowed.status, JSON.stringify(narrowed.body)).toBe(200);
    expect(await api('GET', '/origins', token)).toMatchObject({
      status: 404,
      body: { error: 'not enough permission' },
    });
    const restored = await manager.call('user.update', {
      oldEmailAddress: member.email,
      emailAddress: member.email,
      fullName: 'Restored',
      permission: ALL_MEMBER_PERMISSIONS,
    });
    expect(restored.status).toBe(200);
    await warm(token);
    const disabled = await manager.call('user.set_enabled', { emailAddress: member.email, enabled: false });
    expect(disabled.status).toBe(200);
    expect((await api('GET', '/origins', token)).status).toBe(401);
  });
});

describe('origin lists kept in memory', () => {
  it('shows an origin created, changed or deleted through the API in the very next list', async () => {
    const { member } = await organization();
    const { token } = await issueToken(member.client);
    await warm(token);
    const created = await api('POST', '/origins', token, httpOrigin('created'));
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.originID as number;
    expect(descriptions(await api('GET', '/origins', token))).toEqual(['created']);
    const rules = [{ pattern: '^/small/', path: '/', parameter: 'w=100', disallowOverride: false }];
    const updated = await api('PUT', `/origins/${id}`, token, {
      ...httpOrigin('updated'),
      conversionParameters: rules,
      acl: { isAllowList: false, cidrs: ['192.0.2.0/24'] },
    });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    const [listed] = (await api('GET', '/origins', token)).body.origins;
    expect(listed).toMatchObject({
      description: 'updated',
      conversionParameters: [{ pattern: '^/small/', parameter: 'w=100' }],
      acl: { isAllowList: false, cidrs: ['192.0.2.0/24'] },
    });
    expect((await api('POST', `/origins/${id}/copy`, token, { description: 'copied' })).status).toBe(201);
    expect(descriptions(await api('GET', '/origins', token))).toEqual(['updated', 'copied']);
    expect((await api('DELETE', `/origins/${id}`, token)).status).toBe(204);
    expect(descriptions(await api('GET', '/origins', token))).toEqual(['copied']);
  });

  it('shows an origin changed in the console in the very next list', async () => {
    const { member } = await organization();
    const { token } = await issueToken(member.client);
    const created = await member.client.call('origin.add', { origin: httpOrigin('console') });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    await warm(token);
    const origin = created.body.origin as Record<string, unknown>;
    const updated = await member.client.call('origin.update', {
      origin: { ...origin, description: 'console, changed' },
    });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect(descriptions(await api('GET', '/origins', token))).toEqual(['console, changed']);
  });

  it('shows what the edges write (usage) within a second or so', async () => {
    const { member, organizationId } = await organization();
    const { token } = await issueToken(member.client);
    const created = await api('POST', '/origins', token, httpOrigin('metered'));
    await warm(token);
    const day = new Date().toISOString().slice(0, 10);
    await server.deps.db
      .insertInto('usage_daily')
      .values({ origin_id: created.body.originID, organization_id: organizationId, day, requests: 7 })
      .execute();
    const started = Date.now();
    await until('the usage shows', async () => {
      const [listed] = (await api('GET', '/origins', token)).body.origins;
      return listed.usage.requests === 7 ? true : undefined;
    });
    expect(Date.now() - started).toBeLessThan(ORIGIN_LIST_MAX_AGE_MS + 1_000);
  });
});
