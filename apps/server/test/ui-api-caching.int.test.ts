import { API_VERSION } from '@ukiyo/contract';
import { beforeAll, describe, expect, it } from 'vitest';
import { Client, createTestUser, loggedIn, testServer, type TestServer } from './harness.ts';

let server: TestServer;
beforeAll(async () => {
  server = await testServer();
});

describe('ui-api answers', () => {
  it('are never stored by a cache, successes and refusals alike', async () => {
    const { email } = await createTestUser(server.deps, { accountId: null, permission: 0 });
    const client = await loggedIn(server.baseUrl, email);
    const anonymous = new Client(server.baseUrl);
    const answers = [
      await client.call('user.whoami'),
      await anonymous.call('auth.login', { emailAddress: 7 }),
      await anonymous.call('auth_token.list'),
      await anonymous.call('no.such_operation'),
      await anonymous.call('user.whoami', {}, { headers: { 'X-Requested-With': '' } }),
    ];
    expect(answers.map((answer) => answer.status)).toEqual([200, 400, 403, 404, 400]);
    for (const answer of answers) expect(answer.headers.get('cache-control')).toBe('no-store');
    const get = await fetch(`${server.baseUrl}/.ui-api/user.whoami?api-version=${API_VERSION}`);
    expect(get.status).toBe(405);
    expect(get.headers.get('cache-control')).toBe('no-store');
  });
});
