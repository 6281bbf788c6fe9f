import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { Permission } from '@ukiyo/contract';
import pino from 'pino';
import { WebhookVerificationError } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobQueue } from '@ukiyo/server';
import {
  type Client,
  createTenant,
  createTestUser,
  loggedIn,
  type TestServer,
  testServer,
  until,
} from '@ukiyo/server/testing';
import { Webhooks } from '../src/webhooks.ts';
import { receiver, verified } from './helpers.ts';

let server: TestServer;
let queue: JobQueue;
let stopWorking: () => Promise<void>;
let organizationId: number;
let owner: Client;
const webhooks = (allowPrivate: boolean) =>
  new Webhooks(
    { agents: { http: new HttpAgent(), https: new HttpsAgent() }, allowPrivate, timeoutMs: 1_000 },
    { db: server.deps.db, secrets: server.deps.secrets, jobs: queue },
    pino({ level: 'silent' }),
  );

beforeAll(async () => {
  server = await testServer();
  // Short delays, so retries and the dead letter come within a test's time.
  queue = new JobQueue(server.deps.db, pino({ level: 'silent' }), {
    policies: { webhook: { limit: 2, delaySeconds: 1, expireSeconds: 10 } },
  });
  await queue.start();
  stopWorking = await webhooks(true).work(2);
  const tenant = await createTenant(server.deps, { isLive: true });
  organizationId = tenant.organizationIds[0]!;
  const { email } = await createTestUser(server.deps, {
    accountId: tenant.accountId,
    permission: Permission.organization,
  });
  owner = await loggedIn(server.baseUrl, email);
});
afterAll(async () => {
  await stopWorking();
  await queue.stop();
});

async function rotate(): Promise<string> {
  const rotated = await owner.call('organization.rotate_webhook_secret');
  expect(rotated.status).toBe(200);
  const secret = rotated.body.secret as string;
  expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
  return secret;
}

describe('webhook signatures (Standard Webhooks)', () => {
  it('signs the auth webhook with the organization secret, shown once when rotated', async () => {
    const hook = await receiver();
    try {
      const before = await owner.call('organization.webhook_secret');
      expect(before.body).toEqual({ createdAt: null });
      const secret = await rotate();
      const after = await owner.call('organization.webhook_secret');
      expect(after.body).toEqual({ createdAt: expect.any(String) });
      expect(JSON.stringify(after.body)).not.toContain(secret);

      expect(await webhooks(true).allowed(organizationId, `${hook.url}/auth`, { channel_id: 'c1' })).toBe(
        true,
      );
      expect(hook.calls[0]!.headers['webhook-id']).toMatch(/^msg_/);
      expect(verified(secret, hook.calls[0]!)).toEqual({ channel_id: 'c1' });

      // Rotation takes effect at once: the old secret no longer verifies.
      const next = await rotate();
      await webhooks(true).allowed(organizationId, `${hook.url}/auth`, { channel_id: 'c2' });
      expect(() => verified(secret, hook.calls[1]!)).toThrow(WebhookVerificationError);
      expect(verified(next, hook.calls[1]!)).toEqual({ channel_id: 'c2' });
      // A tampered body fails, as a receiver would see it.
      expect(() => verified(next, { ...hook.calls[1]!, body: '{"channel_id":"c3"}' })).toThrow(
        WebhookVerificationError,
      );
    } finally {
      hook.server.close();
    }
  });

  it('never calls a private address written as such (no lookup for the agents to guard)', async () => {
    const hook = await receiver();
    try {
      expect(await webhooks(false).allowed(organizationId, `${hook.url}/auth`, {})).toBe(false);
      expect(hook.calls).toHaveLength(0);
    } finally {
      hook.server.close();
    }
  });

  it('retries an event with backoff under one webhook-id, each attempt signed', async () => {
    const hook = await receiver([500, 503]);
    try {
      const secret = await rotate();
      const payload = { channel_id: 'c1', type: 'notify.playlist_url', playlist_url: 'https://x/m.m3u8' };
      await webhooks(true).event(organizationId, `${hook.url}/events?token=s3cret`, payload);
      await until('three attempts', async () => (hook.calls.length === 3 ? true : undefined), 20_000);
      const ids = new Set(hook.calls.map((call) => call.headers['webhook-id']));
      expect(ids.size).toBe(1);
      for (const call of hook.calls) expect(verified(secret, call)).toEqual(payload);
      const times = hook.calls.map((call) => Number(call.headers['webhook-timestamp']));
      expect(times[2]! - times[0]!).toBeGreaterThanOrEqual(2);
    } finally {
      hook.server.close();
    }
  });

  it('keeps an event that failed every attempt as a dead letter naming only the host', async () => {
    const hook = await receiver([500, 500, 500]);
    try {
      await webhooks(true).event(organizationId, `${hook.url}/events?token=s3cret`, { type: 'x' });
      const host = new URL(hook.url).host;
      const admin = await loggedIn(
        server.baseUrl,
        (await createTestUser(server.deps, { accountId: null, permission: 127 })).email,
      );
      const dead = await until(
        'the dead letter',
        async () => {
          const listed = await admin.call('admin.job_failed_list');
          return (listed.body.jobs as Array<Record<string, unknown>>).find((job) => job.target === host);
        },
        20_000,
        250,
      );
      expect(dead).toMatchObject({ kind: 'webhook', attempts: 3, lastError: 'the receiver answered 500' });
      expect(JSON.stringify(dead)).not.toContain('s3cret');
    } finally {
      hook.server.close();
    }
  });

  it('refuses the secret operations to image organizations', async () => {
    const image = await createTenant(server.deps, { isLive: false });
    const { email } = await createTestUser(server.deps, {
      accountId: image.accountId,
      permission: Permission.organization,
    });
    const member = await loggedIn(server.baseUrl, email);
    const refused = await member.call('organization.rotate_webhook_secret');
    expect(refused.status).toBe(404);
    expect(refused.body).toEqual({ error: 'live streaming not available' });
  });
});
