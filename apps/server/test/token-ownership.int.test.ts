import { ALL_MEMBER_PERMISSIONS, Permission } from '@ukiyo/contract';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  createTenant,
  createTestUser,
  loggedIn,
  testServer,
  type Client,
  type TestServer,
} from './harness.ts';

let server: TestServer;
beforeAll(async () => {
  server = await testServer();
});

/** Members of one organization with the given permission masks, logged in. */
async function members(...permissions: number[]): Promise<Client[]> {
  const tenant = await createTenant(server.deps);
  return Promise.all(
    permissions.map(async (permission) => {
      const { email } = await createTestUser(server.deps, { accountId: tenant.accountId, permission });
      return loggedIn(server.baseUrl, email);
    }),
  );
}

async function issue(client: Client, description: string): Promise<number> {
  const added = await client.call('auth_token.add', { authToken: { description, permission: 0 } });
  expect(added.status, JSON.stringify(added.body)).toBe(200);
  return (added.body.authToken as { authTokenID: number }).authTokenID;
}

async function listed(client: Client): Promise<string[]> {
  const list = await client.call('auth_token.list', { showDeleted: true });
  return (list.body.authTokens as Array<{ description: string }>).map((token) => token.description).sort();
}

describe('API tokens of other members', () => {
  it('are neither listed nor disabled nor deleted by a member without the member bit', async () => {
    const [plain, other] = await members(0, Permission.statistics);
    const mine = await issue(plain!, 'mine');
    const theirs = await issue(other!, 'theirs');

    expect(await listed(plain!)).toEqual(['mine']);
    expect(await plain!.call('auth_token.disable', { authTokenID: theirs })).toMatchObject({
      status: 404,
      body: { error: 'not found' },
    });
    expect((await plain!.call('auth_token.delete', { authTokenID: theirs })).status).toBe(404);
    const untouched = await server.deps.db
      .selectFrom('auth_tokens')
      .select(['enabled', 'deleted_at'])
      .where('id', '=', theirs)
      .executeTakeFirstOrThrow();
    expect(untouched).toEqual({ enabled: true, deleted_at: null });

    // Their own tokens stay theirs to manage.
    expect((await plain!.call('auth_token.disable', { authTokenID: mine })).status).toBe(200);
    expect((await plain!.call('auth_token.delete', { authTokenID: mine })).status).toBe(200);
    expect(await listed(plain!)).toEqual(['mine']);
  });

  it('are listed, disabled and deleted by members holding the member bit and by administrators', async () => {
    const [manager, other] = await members(Permission.member, ALL_MEMBER_PERMISSIONS);
    const theirs = await issue(other!, 'theirs');
    await issue(manager!, 'mine');
    expect(await listed(manager!)).toEqual(['mine', 'theirs']);
    expect(await manager!.call('auth_token.disable', { authTokenID: theirs })).toMatchObject({
      status: 200,
      body: { authToken: { enabled: false } },
    });
    expect((await manager!.call('auth_token.delete', { authTokenID: theirs })).status).toBe(200);

    const second = await issue(other!, 'second');
    const { email } = await createTestUser(server.deps, { accountId: null, permission: Permission.admin });
    const admin = await loggedIn(server.baseUrl, email);
    const tokenOrganization = await server.deps.db
      .selectFrom('auth_tokens')
      .select('organization_id')
      .where('id', '=', second)
      .executeTakeFirstOrThrow();
    const chosen = await admin.call('auth.change_organization', {
      organizationID: tokenOrganization.organization_id,
    });
    expect(chosen.status, JSON.stringify(chosen.body)).toBe(200);
    expect((await admin.call('auth_token.delete', { authTokenID: second })).status).toBe(200);
  });
});
