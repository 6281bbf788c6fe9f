import { join } from 'node:path';
import { tmpdir } from 'node:os';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { ALL_MEMBER_PERMISSIONS, OriginKind, Permission, operations } from '@ukiyo/contract';
import { signPath } from '@ukiyo/imaging';
import { beforeAll, describe, expect, it } from 'vitest';
import { tokenDigest } from '../src/crypto/tokens.ts';
import { API_ROUTES, bodySchema } from '../src/http/api-v1.ts';
import { createServerApp } from '../src/index.ts';
import {
  createTenant,
  createTestUser,
  getFromEdge,
  loggedIn,
  startImageServer,
  startTestEdge,
  testServer,
  unique,
  type Client,
  type TestServer,
} from './harness.ts';

// The Platform API (/api/v1) over the real app and database, by API tokens made on the console.
let server: TestServer;
let owner: Client;
let liveOwner: Client;
let other: Client;
let otherLive: Client;
let ownerEmail: string;
const V1 = '/api/v1';

interface Reply {
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- answers are checked field by field
  body: any;
  headers: Headers;
}

async function api(
  method: string,
  path: string,
  options: { token?: string; body?: unknown; headers?: Record<string, string>; base?: string } = {},
): Promise<Reply> {
  const response = await fetch(`${options.base ?? server.baseUrl}${V1}${path}`, {
    method,
    headers: {
      ...(options.token ? { Authorization: `Bearer ${options.token}` } : {}),
      ...(options.body === undefined ? {} : { 'Content-Type': 'application/json' }),
      ...options.headers,
    },
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined, headers: response.headers };
}

/**
 * A listener trusting X-Forwarded-For and an address of its own: refused tokens count against
 * their address, and the suites' other files share this server's 127.0.0.1.
 */
let proxied: string;
let addresses = 0;
const elsewhere = () => ({ base: proxied, headers: { 'X-Forwarded-For': `203.0.113.${++addresses}` } });

/** A member of a new organization holding `permission` (every member bit by default), logged in. */
async function newMember(options: { isLive?: boolean; permission?: number } = {}) {
  const tenant = await createTenant(server.deps, { isLive: options.isLive ?? false });
  const user = await createTestUser(server.deps, {
    accountId: tenant.accountId,
    permission: options.permission ?? ALL_MEMBER_PERMISSIONS,
  });
  const client = await loggedIn(server.baseUrl, user.email);
  return { ...user, client, organizationId: tenant.organizationIds[0]! };
}

async function issueToken(client: Client, permission: number | null, description = 'api'): Promise<string> {
  const added = await client.call('auth_token.add', { authToken: { description, permission } });
  expect(added.status, JSON.stringify(added.body)).toBe(200);
  return added.body.encodedToken as string;
}

const httpOrigin = (description = '') => ({
  kind: OriginKind.http,
  description,
  config: { scheme: 'http', host: '127.0.0.1:9', pathPrefix: '', rewriteHost: '' },
});

const hls = [{ video: { width: 640, height: 360 } }];

beforeAll(async () => {
  server = await testServer();
  proxied = await server.withConfig({ TRUST_PROXY: true });
  const first = await newMember();
  ownerEmail = first.email;
  owner = first.client;
  liveOwner = (await newMember({ isLive: true })).client;
  otherLive = (await newMember({ isLive: true })).client;
  other = (await newMember()).client;
});

describe('authentication and limits', () => {
  it('answers 401 with the catalogue body without a valid token, and takes either form of one', async () => {
    const missing = await api('GET', '/origins', elsewhere());
    expect(missing).toMatchObject({ status: 401, body: { error: 'api token invalid' } });
    expect(missing.headers.get('www-authenticate')).toBe('Bearer');
    expect((await api('GET', '/origins', { token: 'not-a-token', ...elsewhere() })).status).toBe(401);
    const token = await issueToken(owner, null);
    const raw = JSON.parse(Buffer.from(token, 'base64').toString('utf8')).token as string;
    expect((await api('GET', '/origins', { token: raw })).status).toBe(200);
    const ok = await api('GET', '/origins', { token });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('ratelimit-limit')).toBe(String(server.deps.config.API_V1_RATE_PER_MINUTE));
    expect(Number(ok.headers.get('ratelimit-remaining'))).toBeLessThan(
      server.deps.config.API_V1_RATE_PER_MINUTE,
    );
    expect(ok.headers.get('cache-control')).toBe('no-store');
  });

  it('limits calls per token and minute (API_V1_RATE_PER_MINUTE), with RateLimit headers', async () => {
    const base = await server.withConfig({ API_V1_RATE_PER_MINUTE: 2 });
    const token = await issueToken(owner, null);
    expect((await api('GET', '/usage', { token, base })).headers.get('ratelimit-remaining')).toBe('1');
    expect((await api('GET', '/usage', { token, base })).headers.get('ratelimit-remaining')).toBe('0');
    const refused = await api('GET', '/usage', { token, base });
    expect(refused).toMatchObject({ status: 429, body: { error: 'too many requests' } });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // Another token's budget is its own.
    expect((await api('GET', '/usage', { token: await issueToken(owner, null), base })).status).toBe(200);
  });

  it('acts for the token’s creator: a disabled creator’s tokens stop working', async () => {
    const member = await newMember({ permission: Permission.origin });
    const token = await issueToken(member.client, null);
    expect((await api('GET', '/origins', { token })).status).toBe(200);
    // Disabled by a member manager of the organization, as the console does it: the token's
    // caller, kept for a few seconds like a session, is dropped at once.
    const tenant = await server.deps.db
      .selectFrom('users')
      .select('sakura_account_id')
      .where('id', '=', member.userId)
      .executeTakeFirstOrThrow();
    const manager = await createTestUser(server.deps, {
      accountId: tenant.sakura_account_id,
      permission: ALL_MEMBER_PERMISSIONS,
    });
    const disabled = await (
      await loggedIn(server.baseUrl, manager.email)
    ).call('user.set_enabled', { emailAddress: member.email, enabled: false });
    expect(disabled.status, JSON.stringify(disabled.body)).toBe(200);
    expect(await api('GET', '/origins', { token, ...elsewhere() })).toMatchObject({
      status: 401,
      body: { error: 'api token invalid' },
    });
  });

  it('answers unknown paths with the catalogue’s not found', async () => {
    const token = await issueToken(owner, null);
    expect(await api('GET', '/nothing-here', { token })).toMatchObject({
      status: 404,
      body: { error: 'not found' },
    });
  });
});

describe('junk', () => {
  it('never answers 500 to junk in paths, queries, headers or bodies, on any route', async () => {
    const token = await issueToken(owner, null);
    const liveToken = await issueToken(liveOwner, null);
    const segments = ['abc', '-1', '0', '1e309', '%E0%A4%A', '%00', 'x'.repeat(300)];
    const bodies = ['[]', '"text"', 'null', '{', '{"origin": {"kind": "x"}}', '{"permission": 1e400}'];
    const queries = [
      'limit=abc',
      'limit=1e9',
      'cursor=%FF%FE',
      `cursor=${'A'.repeat(100)}`,
      'from=x&to=y',
      'originID=-5&url=',
    ];
    for (const route of API_ROUTES) {
      const kind = operations[route.operation].organizationKind === 'live' ? liveToken : token;
      for (const [segmentIndex, segment] of segments.entries()) {
        const path = route.path.replace(/\{\w+\}/g, segment);
        for (const [bodyIndex, body] of (bodySchema(route) ? bodies : [undefined]).entries()) {
          const query = queries[(segmentIndex + bodyIndex) % queries.length];
          const response = await fetch(`${server.baseUrl}${V1}${path}?${query}`, {
            method: route.method,
            headers: {
              Authorization: `Bearer ${kind}`,
              'Content-Type': 'application/json',
              'Idempotency-Key': segment,
              'If-Match': segment,
            },
            body,
          });
          expect(response.status, `${route.method} ${path}?${query} ${body}`).toBeLessThan(500);
          if (response.status !== 204 && response.status !== 304) await response.json();
          else await response.text();
        }
      }
    }
  });
});

describe('permissions', () => {
  it('enforces each route’s permission bit, a token never exceeding its creator', async () => {
    const organizationWide = ALL_MEMBER_PERMISSIONS;
    for (const route of API_ROUTES) {
      const required = operations[route.operation].permission;
      if (required === 0) continue;
      const client = operations[route.operation].organizationKind === 'live' ? liveOwner : owner;
      const lacking = await issueToken(client, organizationWide & ~required);
      const path = route.path.replace(/\{\w+\}/g, '1');
      const refused = await api(route.method, path, {
        token: lacking,
        body: bodySchema(route) ? {} : undefined,
      });
      expect(refused, `${route.method} ${route.path}`).toMatchObject({
        status: 404,
        body: { error: 'not enough permission' },
      });
      const holding = await issueToken(client, required);
      const allowed = await api(route.method, path, {
        token: holding,
        body: bodySchema(route) ? {} : undefined,
      });
      expect(allowed.body?.error, `${route.method} ${route.path}`).not.toBe('not enough permission');
    }
    // A member holding only the origin bit: a full-mask token of theirs holds only that.
    const member = await newMember({ permission: Permission.origin });
    const token = await issueToken(member.client, null);
    expect((await api('GET', '/origins', { token })).status).toBe(200);
    expect((await api('GET', '/members', { token })).body).toEqual({ error: 'not enough permission' });
  });

  it('reaches nothing of another organization by id, on any route', async () => {
    const token = await issueToken(owner, null);
    const liveToken = await issueToken(liveOwner, null);
    const origin = await api('POST', '/origins', { token, body: httpOrigin('victim') });
    const victim = await api('POST', '/tokens', { token, body: { description: 'victim' } });
    const channel = await api('POST', '/channels', { token: liveToken, body: { hls } });
    const values: Record<string, string | number> = {
      originID: origin.body.originID,
      authTokenID: victim.body.authToken.authTokenID,
      channelID: channel.body.id,
      emailAddress: ownerEmail,
    };
    // Bodies that pass validation, so the refusal is the lookup's.
    const bodies: Record<string, unknown> = {
      '/origins/{originID}': httpOrigin('stolen'),
      '/origins/{originID}/check': {},
      '/origins/{originID}/copy': {},
      '/origins/{originID}/certificate': { certificate: 'x', privateKey: 'y' },
      '/members/{emailAddress}': { emailAddress: ownerEmail, fullName: 'Stolen', permission: 0 },
      '/members/{emailAddress}/enabled': { enabled: false },
    };
    const strangers = { image: await issueToken(other, null), live: await issueToken(otherLive, null) };
    for (const route of API_ROUTES.filter((r) => r.path.includes('{'))) {
      const path = route.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(values[name]!));
      const kind = operations[route.operation].organizationKind === 'live' ? 'live' : 'image';
      const refused = await api(route.method, path, {
        token: strangers[kind],
        body: bodySchema(route) ? bodies[route.path] : undefined,
      });
      expect(refused.status, `${route.method} ${route.path}`).toBeGreaterThanOrEqual(400);
      // An error body only (its params echo the caller's own input), nothing of the resource.
      expect(['error', 'params'], `${route.method} ${route.path}`).toEqual(
        expect.arrayContaining(Object.keys(refused.body ?? {})),
      );
    }
    const still = await api('GET', `/origins/${values.originID}`, { token });
    expect(still.headers.get('etag')).toBe(origin.headers.get('etag'));
    const tokens = await api('GET', '/tokens', { token });
    expect(tokens.body.authTokens).toContainEqual(
      expect.objectContaining({ description: 'victim', enabled: true }),
    );
    const channels = await api('GET', '/channels', { token: liveToken });
    expect(channels.body.channels.map((ch: { id: string }) => ch.id)).toContain(values.channelID);
    const members = await api('GET', '/members', { token });
    expect(members.body.users).toContainEqual(
      expect.objectContaining({ emailAddress: ownerEmail, fullName: 'Test User', enabled: true }),
    );
  });

  it('creates tokens narrower than the caller’s, never wider, and revokes them', async () => {
    const originOnly = await issueToken(owner, Permission.origin);
    const wider = await api('POST', '/tokens', {
      token: originOnly,
      body: { description: 'wider', permission: Permission.origin | Permission.cache },
    });
    expect(wider).toMatchObject({ status: 400, body: { error: 'validation error' } });
    const narrower = await api('POST', '/tokens', {
      token: originOnly,
      body: { description: 'ci', permission: Permission.origin },
    });
    expect(narrower.status).toBe(201);
    expect(narrower.body.authToken).toMatchObject({ description: 'ci', permission: Permission.origin });
    const made = narrower.body.encodedToken as string;
    expect((await api('GET', '/origins', { token: made })).status).toBe(200);
    const listed = await api('GET', '/tokens', { token: originOnly });
    expect(listed.body.authTokens.map((t: { description: string }) => t.description)).toContain('ci');
    const id = narrower.body.authToken.authTokenID as number;
    expect((await api('POST', `/tokens/${id}/disable`, { token: originOnly })).body).toMatchObject({
      enabled: false,
    });
    expect((await api('GET', '/origins', { token: made, ...elsewhere() })).status).toBe(401);
    expect((await api('DELETE', `/tokens/${id}`, { token: originOnly })).status).toBe(204);
    expect((await api('DELETE', `/tokens/${id}`, { token: originOnly })).status).toBe(404);
  });
});

describe('origins', () => {
  it('creates, reads, updates with If-Match and deletes, and another organization sees none of it', async () => {
    const token = await issueToken(owner, Permission.origin);
    const stranger = await issueToken(other, null);
    const created = await api('POST', '/origins', { token, body: httpOrigin('first') });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.originID as number;
    const read = await api('GET', `/origins/${id}`, { token });
    expect(read.body).toMatchObject({ originID: id, description: 'first' });
    const etag = read.headers.get('etag')!;
    expect(etag).toMatch(/^".+"$/);
    expect((await api('GET', `/origins/${id}`, { token, headers: { 'If-None-Match': etag } })).status).toBe(
      304,
    );

    for (const [method, path] of [
      ['GET', `/origins/${id}`],
      ['PUT', `/origins/${id}`],
      ['DELETE', `/origins/${id}`],
      ['POST', `/origins/${id}/check`],
    ] as const) {
      const refused = await api(method, path, {
        token: stranger,
        body: method === 'PUT' ? httpOrigin() : undefined,
      });
      expect(refused.status, `${method} ${path}`).toBe(404);
    }
    const theirs = await api('GET', '/origins', { token: stranger });
    expect(theirs.body.origins.map((o: { originID: number }) => o.originID)).not.toContain(id);

    const updated = await api('PUT', `/origins/${id}`, {
      token,
      body: httpOrigin('second'),
      headers: { 'If-Match': etag },
    });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect(updated.body.description).toBe('second');
    const newEtag = updated.headers.get('etag');
    expect(newEtag).not.toBe(etag);
    const stale = await api('PUT', `/origins/${id}`, {
      token,
      body: httpOrigin('third'),
      headers: { 'If-Match': etag },
    });
    expect(stale).toMatchObject({ status: 412, body: { error: 'precondition failed' } });
    expect((await api('GET', `/origins/${id}`, { token })).body.description).toBe('second');
    expect((await api('DELETE', `/origins/${id}`, { token, headers: { 'If-Match': etag } })).status).toBe(
      412,
    );
    expect((await api('DELETE', `/origins/${id}`, { token, headers: { 'If-Match': newEtag! } })).status).toBe(
      204,
    );
    expect(await api('GET', `/origins/${id}`, { token })).toMatchObject({ status: 404 });
  });

  it('validates with the contract’s schema and answers its invalids', async () => {
    const token = await issueToken(owner, Permission.origin);
    const invalid = await api('POST', '/origins', { token, body: { kind: 7, config: { scheme: 'ftp' } } });
    expect(invalid.status).toBe(400);
    expect(invalid.body.error).toBe('validation error');
    expect(Object.keys(invalid.body.invalids)).toEqual(['kind', 'config']);
    // PostgreSQL's text cannot hold NUL: refused as invalid, never a database failure.
    const withNul = await api('POST', '/origins', { token, body: httpOrigin('a\u0000b') });
    expect(withNul).toMatchObject({
      status: 400,
      body: { invalids: { description: ['validation.invalid'] } },
    });
    const notJson = await fetch(`${server.baseUrl}${V1}/origins`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: '{',
    });
    expect(notJson.status).toBe(400);
    expect(await notJson.json()).toEqual({ error: 'malformed request body' });
  });

  it('replays a creating call under its Idempotency-Key and refuses the key for another request', async () => {
    const token = await issueToken(owner, Permission.origin);
    const key = unique('key');
    const first = await api('POST', '/origins', {
      token,
      body: httpOrigin('once'),
      headers: { 'Idempotency-Key': key },
    });
    expect(first.status).toBe(201);
    const again = await api('POST', '/origins', {
      token,
      body: httpOrigin('once'),
      headers: { 'Idempotency-Key': key },
    });
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.headers.get('etag')).toBe(first.headers.get('etag'));
    const listed = await api('GET', '/origins?limit=200', { token });
    expect(listed.body.origins.filter((o: { description: string }) => o.description === 'once')).toHaveLength(
      1,
    );
    const reused = await api('POST', '/origins', {
      token,
      body: httpOrigin('other'),
      headers: { 'Idempotency-Key': key },
    });
    expect(reused).toMatchObject({ status: 422, body: { error: 'idempotency key reused' } });
    const badKey = await api('POST', '/origins', {
      token,
      body: httpOrigin('once'),
      headers: { 'Idempotency-Key': 'has spaces' },
    });
    expect(badKey).toMatchObject({
      status: 400,
      body: { invalids: { 'Idempotency-Key': ['validation.invalid'] } },
    });
    // Keys are per token: another token's same key is a new call.
    const otherToken = await issueToken(owner, Permission.origin);
    const separate = await api('POST', '/origins', {
      token: otherToken,
      body: httpOrigin('once'),
      headers: { 'Idempotency-Key': key },
    });
    expect(separate.status).toBe(201);
    expect(separate.body.originID).not.toBe(first.body.originID);
  });

  it('answers 409 to a retry while the first call with its key still runs', async () => {
    const token = await issueToken(owner, Permission.origin, 'running');
    const { id } = await server.deps.db
      .selectFrom('auth_tokens')
      .select('id')
      .where('token_hash', '=', tokenDigest(JSON.parse(Buffer.from(token, 'base64').toString()).token))
      .executeTakeFirstOrThrow();
    const key = unique('running');
    const first = await api('POST', '/origins', {
      token,
      body: httpOrigin('running'),
      headers: { 'Idempotency-Key': key },
    });
    expect(first.status).toBe(201);
    // As the row stands while a call runs: claimed, no answer yet.
    await server.deps.db
      .updateTable('api_idempotency')
      .set({ status: null, body_enc: null })
      .where('token_id', '=', id)
      .where('idempotency_key', '=', key)
      .execute();
    const retry = await api('POST', '/origins', {
      token,
      body: httpOrigin('running'),
      headers: { 'Idempotency-Key': key },
    });
    expect(retry).toMatchObject({ status: 409, body: { error: 'idempotency key in use' } });
  });

  it('pages through lists with an opaque cursor', async () => {
    const token = await issueToken((await newMember()).client, null);
    for (const description of ['a', 'b', 'c']) {
      expect((await api('POST', '/origins', { token, body: httpOrigin(description) })).status).toBe(201);
    }
    const first = await api('GET', '/origins?limit=2', { token });
    expect(first.body.origins).toHaveLength(2);
    expect(typeof first.body.nextCursor).toBe('string');
    const second = await api('GET', `/origins?limit=2&cursor=${first.body.nextCursor}`, { token });
    expect(second.body.origins).toHaveLength(1);
    expect(second.body.nextCursor).toBeNull();
    const seen = [...first.body.origins, ...second.body.origins].map(
      (o: { description: string }) => o.description,
    );
    expect(seen.sort()).toEqual(['a', 'b', 'c']);
    const bad = await api('GET', '/origins?cursor=zzz', { token });
    expect(bad).toMatchObject({
      status: 400,
      body: { error: 'validation error', invalids: { cursor: ['validation.invalid'] } },
    });
    expect((await api('GET', '/origins?limit=0', { token })).body.invalids).toHaveProperty('limit');
  });

  it('runs the afterOperation hook for API calls as for the console’s', async () => {
    const seen: string[] = [];
    const app = createServerApp(server.deps, {
      consoleDist: join(tmpdir(), 'ukiyo-no-console'),
      afterOperation: (name, context) => seen.push(`${name}:${context.apiToken?.name ?? ''}`),
    });
    const base = await new Promise<string>((resolve) => {
      serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) =>
        resolve(`http://127.0.0.1:${info.port}`),
      );
    });
    const token = await issueToken(owner, Permission.origin, 'deploy bot');
    expect((await api('POST', '/origins', { token, base, body: httpOrigin() })).status).toBe(201);
    expect(seen).toEqual(['origin.add:deploy bot']);
  });
});

describe('the other resources', () => {
  it('reads and updates the organization with If-Match, and reads its plan and usage', async () => {
    const member = await newMember();
    const token = await issueToken(member.client, null);
    const organization = await api('GET', '/organization', { token });
    expect(organization.body.organizationID).toBe(member.organizationId);
    const changed = await api('PUT', '/organization', {
      token,
      body: { name: 'Renamed', serviceDomain: '', description: '' },
      headers: { 'If-Match': organization.headers.get('etag')! },
    });
    expect(changed.body.name).toBe('Renamed');
    const stale = await api('PUT', '/organization', {
      token,
      body: { name: 'Again', serviceDomain: '', description: '' },
      headers: { 'If-Match': organization.headers.get('etag')! },
    });
    expect(stale.status).toBe(412);
    expect((await api('GET', '/organization/plan', { token })).body).toHaveProperty('features');
    expect((await api('GET', '/usage', { token })).status).toBe(200);
    const period = 'from=2026-01-01T00:00:00Z&to=2026-02-01T00:00:00Z';
    expect((await api('GET', `/statistics/origins?${period}`, { token })).body).toHaveProperty('total');
    expect((await api('GET', '/statistics/origins?from=yesterday', { token })).status).toBe(400);
    expect((await api('GET', '/status', { token })).body).toHaveProperty('events');
    expect((await api('GET', '/audit', { token })).body).toHaveProperty('entries');
  });

  it('lists, invites, changes and disables members of the token’s organization only', async () => {
    // Members are given at most the bits the caller holds.
    const token = await issueToken(owner, Permission.member | Permission.origin | Permission.cache);
    const stranger = await issueToken(other, null);
    const emailAddress = `${unique('invited')}@example.com`;
    const invited = await api('POST', '/members', {
      token,
      body: {
        user: { emailAddress, fullName: 'Invited', permission: Permission.origin },
        password: 'member-password-1',
      },
    });
    expect(invited.status, JSON.stringify(invited.body)).toBe(201);
    const members = await api('GET', '/members', { token });
    expect(members.body.users.map((u: { emailAddress: string }) => u.emailAddress)).toContain(emailAddress);
    const theirs = await api('GET', '/members', { token: stranger });
    expect(theirs.body.users.map((u: { emailAddress: string }) => u.emailAddress)).not.toContain(
      emailAddress,
    );
    const changed = await api('PUT', `/members/${emailAddress}`, {
      token,
      body: { emailAddress, fullName: 'Changed', permission: Permission.cache },
    });
    expect(changed.body).toMatchObject({ fullName: 'Changed', permission: Permission.cache });
    expect(
      (await api('PUT', `/members/${emailAddress}/enabled`, { token: stranger, body: { enabled: false } }))
        .status,
    ).toBe(404);
    const disabled = await api('PUT', `/members/${emailAddress}/enabled`, {
      token,
      body: { enabled: false },
    });
    expect(disabled.body).toMatchObject({ enabled: false });
  });

  it('lists, creates and deletes live channels', async () => {
    const token = await issueToken(liveOwner, Permission.channel);
    const created = await api('POST', '/channels', {
      token,
      body: { hls },
      headers: { 'Idempotency-Key': unique('ch') },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.id as string;
    expect(
      (await api('GET', '/channels', { token })).body.channels.map((ch: { id: string }) => ch.id),
    ).toContain(id);
    expect((await api('DELETE', `/channels/${id}`, { token: await issueToken(other, null) })).status).toBe(
      404,
    );
    expect((await api('DELETE', `/channels/${id}`, { token })).status).toBe(204);
    // An image organization's token: channels are for live organizations.
    expect((await api('GET', '/channels', { token: await issueToken(owner, null) })).status).toBe(404);
  });

  it('refuses cache calls on another organization’s origin', async () => {
    const mine = await api('POST', '/origins', { token: await issueToken(owner, null), body: httpOrigin() });
    const stranger = await issueToken(other, Permission.cache);
    const purge = await api('POST', '/cache/purge', {
      token: stranger,
      body: { originID: mine.body.originID, url: '/a.jpg' },
    });
    expect(purge.status).toBe(404);
    const lookup = await api('GET', `/cache?originID=${mine.body.originID}&url=/a.jpg`, { token: stranger });
    expect(lookup.status).toBe(404);
    const prefix = await api('POST', '/cache/purge-prefix', {
      token: stranger,
      body: { originID: mine.body.originID, pathPrefix: '/' },
    });
    expect(prefix.status).toBe(404);
  });
});

describe('the cache, through a real edge', () => {
  it('copies an origin under a new name, and rotates its signing secret so only new signatures verify', async () => {
    const imageServer = await startImageServer({ width: 320, height: 240 }, '#3355aa');
    const edge = await startTestEdge(server);
    try {
      await new Promise<void>((resolve) => edge.server.listen(0, '127.0.0.1', resolve));
      const token = await issueToken(owner, Permission.origin);
      const { port } = imageServer.address() as AddressInfo;
      const source = await api('POST', '/origins', {
        token,
        body: {
          ...httpOrigin('source'),
          config: { ...httpOrigin().config, host: `127.0.0.1:${port}` },
          enableSignedUrl: true,
          signingSecret: 'first-secret',
          conversionParameters: [{ pattern: 'thumbs/*', path: '', parameter: 'w=64' }],
          acl: { isAllowList: false, cidrs: ['192.0.2.0/24'] },
        },
      });
      expect(source.status, JSON.stringify(source.body)).toBe(201);
      const copied = await api('POST', `/origins/${source.body.originID}/copy`, {
        token,
        body: { description: 'the copy' },
      });
      expect(copied.status, JSON.stringify(copied.body)).toBe(201);
      expect(copied.body).toMatchObject({
        description: 'the copy',
        enableSignedUrl: true,
        signingSecret: 'first-secret',
        config: source.body.config,
        acl: source.body.acl,
        conversionParameters: [expect.objectContaining({ pattern: 'thumbs/*', parameter: 'w=64' })],
      });
      expect(copied.body.originID).not.toBe(source.body.originID);
      expect(copied.body.name).not.toBe(source.body.name);

      const rotated = await api('POST', `/origins/${copied.body.originID}/signing-secret`, { token });
      expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
      expect(rotated.body.signingSecret).toMatch(/^[A-Za-z0-9]{20}$/);
      expect(rotated.headers.get('etag')).not.toBe(copied.headers.get('etag'));
      const reread = await api('GET', `/origins/${copied.body.originID}`, { token });
      expect(reread.body).toMatchObject({
        signingSecret: rotated.body.signingSecret,
        description: 'the copy',
      });
      // The source keeps its own secret.
      expect((await api('GET', `/origins/${source.body.originID}`, { token })).body.signingSecret).toBe(
        'first-secret',
      );

      await edge.refreshOrigins();
      const name = copied.body.name as string;
      const fetchSigned = async (secret: string) =>
        (await getFromEdge(edge, name, signPath(secret, '/w=100/a.jpg'))).status;
      expect(await fetchSigned(rotated.body.signingSecret)).toBe(200);
      expect(await fetchSigned('first-secret')).toBe(403);
    } finally {
      await edge.close();
      await new Promise((resolve) => imageServer.close(resolve));
    }
  });

  it('looks up, purges one image and purges a whole origin', async () => {
    const imageServer = await startImageServer({ width: 320, height: 240 }, '#aa3355');
    const edge = await startTestEdge(server);
    try {
      await new Promise<void>((resolve) => edge.server.listen(0, '127.0.0.1', resolve));
      const base = await server.withConfig({}, { cacheControl: edge });
      const token = await issueToken(owner, Permission.origin | Permission.cache);
      const { port } = imageServer.address() as AddressInfo;
      const origin = await api('POST', '/origins', {
        token,
        base,
        body: { ...httpOrigin(), config: { ...httpOrigin().config, host: `127.0.0.1:${port}` } },
      });
      await edge.refreshOrigins();
      const name = origin.body.name as string;
      expect((await getFromEdge(edge, name, '/w=100/a.jpg')).status).toBe(200);
      expect((await getFromEdge(edge, name, '/w=100/b.jpg')).status).toBe(200);
      const lookup = `/cache?originID=${origin.body.originID}&url=${encodeURIComponent('/a.jpg')}`;
      expect((await api('GET', lookup, { token, base })).body.urls).toHaveLength(1);
      const purged = await api('POST', '/cache/purge', {
        token,
        base,
        body: { originID: origin.body.originID, url: '/a.jpg' },
      });
      expect(purged.body.urls).toHaveLength(1);
      expect((await api('GET', lookup, { token, base })).body.urls).toEqual([]);
      const whole = await api('POST', '/cache/purge-prefix', {
        token,
        base,
        body: { originID: origin.body.originID, pathPrefix: '/' },
      });
      expect(whole).toMatchObject({ status: 200, body: { images: 1 } });
    } finally {
      await edge.close();
      await new Promise((resolve) => imageServer.close(resolve));
    }
  });
});
