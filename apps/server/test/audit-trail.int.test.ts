import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { ALL_MEMBER_PERMISSIONS, OriginKind, Permission } from '@ukiyo/contract';
import type { Edge } from '@ukiyo/edge';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTenant,
  createTestUser,
  getFromEdge,
  loggedIn,
  startImageServer,
  startTestEdge,
  testServer,
  type Client,
  type TestServer,
} from './harness.ts';

// The configuration audit trail: changes made through the console and with API tokens, read
// back through audit.list and audit.organization_list over the real HTTP app.
interface Entry {
  auditEntryID: number;
  kind: string;
  email: string;
  ip: string;
  token: { id: number; name: string } | null;
  operation: string | null;
  subject: string;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
}

const SIGNING_SECRET = 'first-signing-secret-value';
const NEW_SIGNING_SECRET = 'second-signing-secret-value';

let server: TestServer;
let edge: Edge;
let imageServer: Server;
let baseUrl: string;

async function owner() {
  const tenant = await createTenant(server.deps);
  const { email } = await createTestUser(server.deps, {
    accountId: tenant.accountId,
    permission: ALL_MEMBER_PERMISSIONS,
  });
  return { tenant, email, client: await loggedIn(baseUrl, email) };
}

async function trail(client: Client, query: Record<string, unknown> = {}) {
  const answer = await client.call('audit.organization_list', query);
  expect(answer.status).toBe(200);
  return answer.body as { entries: Entry[]; nextCursor: number | null };
}

async function addOrigin(client: Client, signed = true) {
  const port = (imageServer.address() as AddressInfo).port;
  const added = await client.call('origin.add', {
    origin: {
      kind: OriginKind.http,
      enableSignedUrl: signed,
      signingSecret: signed ? SIGNING_SECRET : '',
      config: { scheme: 'http', host: `127.0.0.1:${port}`, pathPrefix: '', rewriteHost: '' },
    },
  });
  expect(added.status).toBe(200);
  return added.body.origin as Record<string, unknown> & { originID: number; name: string };
}

beforeAll(async () => {
  server = await testServer();
  imageServer = await startImageServer({ width: 320, height: 240 }, '#4682b4');
  edge = await startTestEdge(server);
  await new Promise<void>((resolve) => edge.server.listen(0, '127.0.0.1', resolve));
  baseUrl = await server.withConfig({}, { cacheControl: edge });
});

afterAll(async () => {
  await edge.close();
  await new Promise((resolve) => imageServer.close(resolve));
});

describe('audit trail', () => {
  it('records a person’s origin change with who, where and the changed fields, secrets masked', async () => {
    const { client, email } = await owner();
    const origin = await addOrigin(client);
    const updated = await client.call('origin.update', {
      origin: {
        ...origin,
        signingSecret: NEW_SIGNING_SECRET,
        defaultCache: 600,
        acl: { isAllowList: true, cidrs: ['192.0.2.0/24'] },
      },
    });
    expect(updated.status).toBe(200);

    const { entries } = await trail(client);
    const [change, creation] = entries;
    expect(change).toMatchObject({
      kind: 'origin',
      operation: 'origin.update',
      subject: origin.name,
      email,
      ip: '127.0.0.1',
      token: null,
      before: {
        signingSecret: '********',
        defaultCache: 0,
        acl: { isAllowList: false, cidrs: [] },
      },
      after: {
        signingSecret: '********',
        defaultCache: 600,
        acl: { isAllowList: true, cidrs: ['192.0.2.0/24'] },
      },
    });
    // Only what changed is kept.
    expect(Object.keys(change!.after!).sort()).toEqual(['acl', 'defaultCache', 'signingSecret']);
    expect(creation).toMatchObject({
      operation: 'origin.add',
      before: null,
      after: { enableSignedUrl: true },
    });
    const everything = JSON.stringify(entries);
    expect(everything).not.toContain(SIGNING_SECRET);
    expect(everything).not.toContain(NEW_SIGNING_SECRET);

    // The person's own activity lists the same changes beside the sign-in.
    const own = (await client.call('audit.list', {})).body.entries as Entry[];
    expect(own.map((entry) => entry.operation ?? entry.kind)).toEqual([
      'origin.update',
      'origin.add',
      'login',
    ]);
  });

  it('records members, permissions and tokens, and a purge made with an API token', async () => {
    const { client, tenant } = await owner();
    const origin = await addOrigin(client, false);
    const member = await createTestUser(server.deps, {
      accountId: tenant.accountId,
      permission: Permission.statistics,
    });
    await client.call('user.update', {
      oldEmailAddress: member.email,
      emailAddress: member.email,
      fullName: 'Renamed Member',
      permission: Permission.statistics | Permission.cache,
    });
    const issued = await client.call('auth_token.add', {
      authToken: { description: 'deploy purge', permission: Permission.cache },
    });
    const token = issued.body.encodedToken as string;
    const tokenId = (issued.body.authToken as { authTokenID: number }).authTokenID;

    await edge.refreshOrigins();
    expect((await getFromEdge(edge, origin.name, '/w=80/photo.jpg')).status).toBe(200);
    const url = `http://${origin.name}/photo.jpg`;
    const purged = await fetch(`${baseUrl}/api/cache.delete`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
      body: JSON.stringify({ url }),
    });
    expect(purged.status).toBe(200);

    const { entries } = await trail(client);
    expect(entries.map((entry) => entry.operation)).toEqual([
      'cache.delete',
      'auth_token.add',
      'user.update',
      'origin.add',
      null,
    ]);
    const [purge, tokenAdded, memberChange] = entries;
    expect(purge).toMatchObject({
      kind: 'cache',
      subject: url,
      token: { id: tokenId, name: 'deploy purge' },
      ip: '127.0.0.1',
      after: { url, purged: 1 },
    });
    expect(tokenAdded).toMatchObject({
      kind: 'token',
      after: { description: 'deploy purge', enabled: true },
    });
    expect(JSON.stringify(tokenAdded)).not.toContain(token);
    expect(memberChange).toMatchObject({
      kind: 'member',
      subject: member.email,
      before: { fullName: 'Test User', permission: Permission.statistics },
      after: { fullName: 'Renamed Member', permission: Permission.statistics | Permission.cache },
    });
  });

  it('records a change made with an API token through /api/v1 under the token and its person', async () => {
    const { client, email } = await owner();
    const issued = await client.call('auth_token.add', {
      authToken: { description: 'ci deploy', permission: Permission.origin },
    });
    const origin = await addOrigin(client);
    const { originID, ...fields } = origin;
    const updated = await fetch(`${baseUrl}/api/v1/origins/${originID}`, {
      method: 'PUT',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${issued.body.encodedToken}` },
      body: JSON.stringify({ ...fields, signingSecret: NEW_SIGNING_SECRET, description: 'from CI' }),
    });
    expect(updated.status, await updated.clone().text()).toBe(200);

    const [change] = (await trail(client)).entries;
    expect(change).toMatchObject({
      operation: 'origin.update',
      email,
      token: { id: (issued.body.authToken as { authTokenID: number }).authTokenID, name: 'ci deploy' },
      before: { signingSecret: '********', description: '' },
      after: { signingSecret: '********', description: 'from CI' },
    });
    expect(JSON.stringify(change)).not.toContain(NEW_SIGNING_SECRET);
  });

  it('filters by kind, actor and period, and pages with a cursor', async () => {
    const { client, email } = await owner();
    await addOrigin(client);
    await addOrigin(client);
    await client.call('organization.update', {
      name: 'Renamed organization',
      serviceDomain: '',
      description: '',
    });

    const origins = await trail(client, { kind: 'origin', limit: 1 });
    expect(origins.entries).toHaveLength(1);
    expect(origins.nextCursor).toBe(origins.entries[0]!.auditEntryID);
    const next = await trail(client, { kind: 'origin', limit: 1, cursor: origins.nextCursor });
    expect(next.entries[0]!.auditEntryID).toBeLessThan(origins.entries[0]!.auditEntryID);
    expect(next.nextCursor).toBeNull();

    const organization = await trail(client, { kind: 'organization' });
    expect(organization.entries[0]).toMatchObject({ after: { name: 'Renamed organization' } });
    expect((await trail(client, { actor: email.slice(0, 10).toUpperCase() })).entries).toHaveLength(4);
    expect((await trail(client, { actor: 'nobody%' })).entries).toHaveLength(0);
    const future = new Date(Date.now() + 60_000).toISOString();
    expect((await trail(client, { from: future })).entries).toHaveLength(0);
    expect((await trail(client, { to: future })).entries).toHaveLength(4);
    expect((await client.call('audit.organization_list', { kind: 'nonsense' })).body.error).toBe(
      'validation error',
    );
  });

  it('never shows one tenant another’s entries, and the organization trail only to member managers', async () => {
    const first = await owner();
    await addOrigin(first.client);
    const second = await owner();
    const secondEntries = (await trail(second.client)).entries;
    expect(secondEntries.every((entry) => entry.email === second.email)).toBe(true);
    expect(JSON.stringify(secondEntries)).not.toContain(first.email);
    const ownOfSecond = (await second.client.call('audit.list', {})).body.entries as Entry[];
    expect(ownOfSecond.map((entry) => entry.kind)).toEqual(['login']);

    const viewer = await createTestUser(server.deps, {
      accountId: first.tenant.accountId,
      permission: Permission.statistics,
    });
    const viewerClient = await loggedIn(baseUrl, viewer.email);
    expect((await viewerClient.call('audit.organization_list', {})).body.error).toBe('not enough permission');
  });
});
