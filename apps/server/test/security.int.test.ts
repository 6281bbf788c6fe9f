import { mkdtempSync, writeFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve } from '@hono/node-server';
import { API_VERSION, Permission } from '@ukiyo/contract';
import { beforeAll, describe, expect, it } from 'vitest';
import { createServerApp } from '../src/http/app.ts';
import { Health } from '../src/http/health.ts';
import { createLogger } from '../src/logger.ts';
import {
  Client,
  createTenant,
  createTestUser,
  loggedIn,
  PASSWORD,
  testServer,
  unique,
  type TestServer,
} from './harness.ts';

// The security review of issue 8, each item with a request that would get through without it.
let server: TestServer;

beforeAll(async () => {
  server = await testServer();
});

async function member(permission = Permission.cache | Permission.origin) {
  const tenant = await createTenant(server.deps);
  const user = await createTestUser(server.deps, { accountId: tenant.accountId, permission });
  return { tenant, user };
}

describe('console security headers', () => {
  it('sends a Content-Security-Policy that allows only the console’s own and hashed inline scripts', async () => {
    const dist = mkdtempSync(join(tmpdir(), 'ukiyo-dist-'));
    const inline = "location.replace('/unsupported.html');";
    writeFileSync(
      join(dist, 'index.html'),
      `<!doctype html><html><head><script nomodule>${inline}</script><script type="module" src="/assets/a.js"></script></head><body></body></html>`,
    );
    const health = new Health({ ok: { critical: true, run: async () => {} } });
    const app = createServerApp(server.deps, { consoleDist: dist, health });
    const base = await new Promise<string>((resolve) =>
      serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) =>
        resolve(`http://127.0.0.1:${info.port}`),
      ),
    );
    const page = await fetch(`${base}/organization/`);
    expect(page.status).toBe(200);
    const csp = page.headers.get('content-security-policy') ?? '';
    const directives = Object.fromEntries(
      csp.split(';').map((part) => {
        const [name, ...values] = part.trim().split(/\s+/);
        return [name, values];
      }),
    );
    const { createHash } = await import('node:crypto');
    const hash = `'sha256-${createHash('sha256').update(inline).digest('base64')}'`;
    expect(directives['script-src']).toEqual(["'self'", hash]);
    expect(directives['script-src']).not.toContain("'unsafe-inline'");
    expect(directives['object-src']).toEqual(["'none'"]);
    expect(directives['base-uri']).toEqual(["'none'"]);
    expect(directives['frame-ancestors']).toEqual(["'none'"]);
    expect(directives['default-src']).toEqual(["'self'"]);
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    expect(page.headers.get('referrer-policy')).toBe('same-origin');
    expect(page.headers.get('cross-origin-opener-policy')).toBe('same-origin');
    // HSTS only where the console is reached over HTTPS.
    expect(page.headers.get('strict-transport-security')).toBeNull();
    const probe = await fetch(`${base}/readyz`);
    expect(probe.status).toBe(200);
    expect(await probe.json()).toMatchObject({ status: 'ok' });

    const secure = await fetch(
      `${await server.withConfig({ PUBLIC_URL: 'https://console.example' })}/.ui-api/user.whoami?api-version=${API_VERSION}`,
      {
        method: 'POST',
        headers: { 'X-Requested-With': 'XMLHttpRequest' },
      },
    );
    expect(secure.headers.get('strict-transport-security')).toBe('max-age=31536000');
  });
});

describe('CSRF', () => {
  it('refuses a cross-site request that carries the victim’s session cookie, and changes nothing', async () => {
    const { user, tenant } = await member(Permission.cache);
    const victim = await loggedIn(server.baseUrl, user.email);
    const before = await victim.call('auth_token.list');
    expect(before.status).toBe(200);
    const count = (body: Record<string, unknown>) => (body.authTokens as unknown[]).length;
    // What a page on another site can make a browser send: the cookie goes along (a top-level
    // form POST under SameSite=Lax, or a same-site subdomain), but the browser sets Origin
    // and Sec-Fetch-Site, and a form cannot add X-Requested-With.
    const attempts: Array<Record<string, string>> = [
      { Origin: 'https://evil.example', 'Sec-Fetch-Site': 'cross-site' },
      { Origin: 'https://evil.example' },
      { 'Sec-Fetch-Site': 'same-site' },
    ];
    for (const headers of attempts) {
      const forged = await victim.call(
        'auth_token.add',
        { authToken: { description: 'evil', permission: 0 } },
        { headers },
      );
      expect(forged.status).toBe(400);
      expect(forged.body.error).toBe('cross-site request refused');
    }
    const formPost = await fetch(`${server.baseUrl}/.ui-api/auth_token.add?api-version=${API_VERSION}`, {
      method: 'POST',
      headers: { 'Content-Type': 'text/plain', Cookie: victim.cookie },
      body: JSON.stringify({ authToken: { description: 'evil', permission: 0 } }),
    });
    expect(formPost.status).toBe(400);
    expect(((await formPost.json()) as { error: string }).error).toBe('missing X-Requested-With header');
    const after = await victim.call('auth_token.list');
    expect(count(after.body)).toBe(count(before.body));
    expect(tenant.organizationIds.length).toBe(1);
  });
});

describe('session fixation', () => {
  it('replaces a session id planted before login and destroys the planted one', async () => {
    const { user } = await member();
    const attacker = await loggedIn(server.baseUrl, (await member()).user.email);
    const planted = attacker.cookie;
    expect(planted).toMatch(/^ukiyo_session=.+/);
    const victim = new Client(server.baseUrl);
    victim.cookie = planted;
    expect((await victim.login(user.email, PASSWORD)).status).toBe(200);
    expect(victim.cookie).not.toBe(planted);
    expect(victim.cookie).toMatch(/^ukiyo_session=.+/);
    // The planted id is dead: the attacker does not ride the victim's login.
    const riding = await attacker.call('user.whoami');
    expect(JSON.stringify(riding.body)).not.toContain(user.email);
    expect(riding.body).not.toHaveProperty('user.emailAddress', user.email);
    const mine = await victim.call('user.whoami');
    expect(JSON.stringify(mine.body)).toContain(user.email);
  });
});

describe('public API rate limits', () => {
  async function publicCall(base: string, token: string | undefined, ip: string) {
    const response = await fetch(`${base}/api/token.info`, {
      method: 'POST',
      headers: { 'X-Forwarded-For': ip, ...(token ? { Authorization: `Bearer ${token}` } : {}) },
    });
    const header = (name: string) => response.headers.get(name);
    return {
      status: response.status,
      retryAfter: header('retry-after'),
      rateLimit: [header('ratelimit-limit'), header('ratelimit-remaining'), header('ratelimit-reset')],
      body: await response.json(),
    };
  }

  async function cacheToken() {
    const { user } = await member(Permission.cache);
    const owner = await loggedIn(server.baseUrl, user.email);
    const added = await owner.call('auth_token.add', {
      authToken: { description: unique('rate'), permission: Permission.cache },
    });
    return added.body.encodedToken as string;
  }

  it('refuses further bad tokens from an address after 20, never a valid token from it', async () => {
    const token = await cacheToken();
    const base = await server.withConfig({ TRUST_PROXY: true });
    const ip = `203.0.113.${Math.floor(Math.random() * 250)}`;
    for (let i = 0; i < 20; i++) expect((await publicCall(base, `bad-${i}`, ip)).status).toBe(401);
    for (const bad of ['bad-again', undefined]) {
      const locked = await publicCall(base, bad, ip);
      expect(locked).toMatchObject({ status: 429, body: { ok: false, error: 'too many requests' } });
      expect(Number(locked.retryAfter)).toBeGreaterThan(800);
    }
    // Everyone behind that address (one NAT) with a token of their own goes on working.
    expect(await publicCall(base, token, ip)).toMatchObject({ status: 200, body: { ok: true } });
    const otherAddress = await publicCall(base, 'bad', `198.18.0.${Math.floor(Math.random() * 250)}`);
    expect(otherAddress.status).toBe(401);
  });

  it('limits calls per token and minute (PUBLIC_API_RATE_PER_MINUTE), with RateLimit headers', async () => {
    const token = await cacheToken();
    const base = await server.withConfig({ TRUST_PROXY: true, PUBLIC_API_RATE_PER_MINUTE: 3 });
    const ip = `192.0.2.${Math.floor(Math.random() * 250)}`;
    for (let i = 0; i < 3; i++) {
      const call = await publicCall(base, token, ip);
      expect(call.status).toBe(200);
      expect(call.rateLimit).toEqual(['3', String(2 - i), '60']);
    }
    const limited = await publicCall(base, token, ip);
    expect(limited.status).toBe(429);
    expect(limited.retryAfter).toBe('60');
    expect(limited.rateLimit).toEqual(['3', '0', '60']);
  });
});

describe('logs', () => {
  it('never contain passwords, session cookies or API tokens, and carry request ids', async () => {
    const lines: string[] = [];
    const log = createLogger(
      { LOG_LEVEL: 'debug' },
      'server',
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          lines.push(chunk.toString());
          done();
        },
      }),
    );
    const base = await server.withConfig({}, { log });
    const { user } = await member(Permission.cache);
    const client = new Client(base);
    const wrong = 'Wrong-Password-Sentinel-91';
    await client.login(user.email, wrong);
    await client.login(user.email, PASSWORD);
    const session = client.cookie.split('=')[1]!;
    const added = await client.call('auth_token.add', {
      authToken: { description: 'log', permission: Permission.cache },
    });
    const token = added.body.encodedToken as string;
    const tagged = await fetch(`${base}/api/token.info`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'X-Request-Id': 'trace-me-123' },
    });
    expect(tagged.headers.get('x-request-id')).toBe('trace-me-123');
    await client.call('user.request_password_reset', { emailAddress: user.email });
    const changed = await client.call('user.update_password', {
      userId: user.userId,
      oldPassword: PASSWORD,
      newPassword: 'New-Password-Sentinel-77',
    });
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);

    const written = lines.join('');
    expect(lines.length).toBeGreaterThan(4);
    expect(written).toContain('"reqId":"trace-me-123"');
    expect(written).toContain('"route":"ui-api:auth.login"');
    for (const secret of [wrong, PASSWORD, session, token, 'New-Password-Sentinel-77'])
      expect(written).not.toContain(secret);
  });
});
