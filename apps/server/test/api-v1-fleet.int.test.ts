import { randomBytes } from 'node:crypto';
import { OriginKind } from '@ukiyo/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiV1, loggedIn, memberAndManager, testDatabaseUrl, testServer, type Client } from './harness.ts';
import { fleetSkipReason, PrivateRedis, sleep, startConsoleServers, type AppProcess } from './processes.ts';

// Two console server processes (`npm run start:server`) on one PostgreSQL and one Redis: what
// one of them keeps in memory for /api/v1 (tokens and their callers, origin lists) is dropped
// by a change made through the other before that change's call returns.
const databaseUrl = testDatabaseUrl();
const skipReason = fleetSkipReason(databaseUrl);
if (skipReason) console.warn(`api-v1-fleet.int.test.ts skipped: ${skipReason}`);

describe.skipIf(skipReason !== '')('/api/v1 on two console processes over Redis', () => {
  const redis = new PrivateRedis();
  let servers: AppProcess[] = [];
  let urls: string[] = [];
  /** A member of a fresh organization (every member bit) and a manager there, logged in on the first process. */
  let member: { email: string; client: Client };
  let manager: Client;

  const api = (server: number, method: string, path: string, token: string, body?: unknown) =>
    apiV1(urls[server]!, method, path, token, body);

  async function issueToken() {
    const added = await member.client.call('auth_token.add', {
      authToken: { description: 'ci', permission: null },
    });
    expect(added.status, JSON.stringify(added.body)).toBe(200);
    return {
      token: added.body.encodedToken as string,
      id: (added.body.authToken as { authTokenID: number }).authTokenID,
    };
  }

  /** Calls on both processes, so each holds the token, its caller and the origin list. */
  async function warmBoth(token: string) {
    for (const server of [0, 1])
      for (let i = 0; i < 3; i++) expect((await api(server, 'GET', '/origins', token)).status).toBe(200);
  }

  beforeAll(async () => {
    const harness = await testServer();
    await redis.start();
    const secretKey = randomBytes(32).toString('base64');
    servers = await startConsoleServers({ databaseUrl, redisUrl: redis.url, secretKey });
    urls = servers.map((server) => `http://127.0.0.1:${server.env.PORT}`);
    const created = await memberAndManager(harness.deps);
    member = { email: created.member.email, client: await loggedIn(urls[0]!, created.member.email) };
    manager = await loggedIn(urls[0]!, created.manager.email);
  }, 120_000);

  afterAll(async () => {
    await Promise.all(servers.map((server) => server.stop('SIGKILL')));
    await redis.stop();
  });

  it('refuses on one process a token revoked through the other, on the very next call', async () => {
    for (let round = 0; round < 5; round++) {
      const ci = await issueToken();
      await warmBoth(ci.token);
      const revoked =
        round % 2 === 0
          ? (await member.client.call('auth_token.delete', { authTokenID: ci.id })).status
          : (await api(0, 'POST', `/tokens/${ci.id}/disable`, ci.token)).status;
      expect(revoked).toBe(200);
      expect(await api(1, 'GET', '/origins', ci.token)).toMatchObject({
        status: 401,
        body: { error: 'api token invalid' },
      });
    }
  });

  it('shows on one process an origin changed through the other, in the very next list', async () => {
    const { token } = await issueToken();
    const created = await api(0, 'POST', '/origins', token, {
      kind: OriginKind.http,
      description: 'round 0',
      config: { scheme: 'http', host: '127.0.0.1:9', pathPrefix: '', rewriteHost: '' },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const { originID, ...origin } = created.body;
    for (let round = 1; round <= 5; round++) {
      await warmBoth(token);
      const updated = await api(0, 'PUT', `/origins/${originID}`, token, {
        ...origin,
        description: `round ${round}`,
      });
      expect(updated.status, JSON.stringify(updated.body)).toBe(200);
      const listed = await api(1, 'GET', '/origins', token);
      expect(listed.body.origins.map((o: { description: string }) => o.description)).toEqual([
        `round ${round}`,
      ]);
    }
  });

  it('refuses on one process the tokens of a creator disabled through the other', async () => {
    const { token } = await issueToken();
    await warmBoth(token);
    const disabled = await manager.call('user.set_enabled', { emailAddress: member.email, enabled: false });
    expect(disabled.status, JSON.stringify(disabled.body)).toBe(200);
    expect((await api(1, 'GET', '/origins', token)).status).toBe(401);
    const enabled = await manager.call('user.set_enabled', { emailAddress: member.email, enabled: true });
    expect(enabled.status).toBe(200);
    member.client = await loggedIn(urls[0]!, member.email);
  });

  it('with Redis away, reads tokens from the database: a revocation still holds at once', async () => {
    const ci = await issueToken();
    await warmBoth(ci.token);
    await redis.stop();
    // The processes see their connections close.
    await sleep(500);
    expect((await member.client.call('auth_token.delete', { authTokenID: ci.id })).status).toBe(200);
    expect((await api(1, 'GET', '/origins', ci.token)).status).toBe(401);
  });
});
