import { Permission } from '@ukiyo/contract';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  Client,
  createTenant,
  createTestUser,
  loggedIn,
  loggedInAdministrator,
  startSmtpSink,
  testServer,
  type TestServer,
  unique,
} from './harness.ts';
import { until } from './processes.ts';

/** Activation and reset links stay readable in the outbox only while they work. */
let server: TestServer;
let admin: Client;
beforeAll(async () => {
  server = await testServer();
  admin = await loggedInAdministrator(server);
});

const TOKEN = /(?:activate\/|token=)([A-Za-z0-9_-]{43})/;

/** The body of the newest mail to `to` as administrators see it on /admin/outbox. */
async function outboxBody(to: string): Promise<string> {
  const listed = await admin.call('admin.outbox_list');
  const mails = listed.body.mails as Array<{ to: string; body: string }>;
  return mails.find((mail) => mail.to === to)!.body;
}

async function storedBodies(to: string): Promise<string> {
  const rows = await server.deps.db
    .selectFrom('mail_outbox')
    .select('body')
    .where('recipient', '=', to)
    .execute();
  return rows.map((row) => row.body).join('\n');
}

async function invitedMember(): Promise<{ email: string; token: string }> {
  const tenant = await createTenant(server.deps);
  const { email: ownerEmail } = await createTestUser(server.deps, {
    accountId: tenant.accountId,
    permission: Permission.member,
  });
  const owner = await loggedIn(server.baseUrl, ownerEmail);
  const email = `${unique('invited')}@example.com`;
  const added = await owner.call('user.add', {
    user: { emailAddress: email, fullName: 'Invited', permission: 0 },
    password: 'member-password-1',
  });
  expect(added.status, JSON.stringify(added.body)).toBe(200);
  const token = TOKEN.exec(await outboxBody(email))?.[1];
  expect(token).toBeDefined();
  return { email, token: token! };
}

describe('the mail outbox without SMTP', () => {
  it('shows an activation link until it is used, then masks it', async () => {
    const { email, token } = await invitedMember();
    expect(await outboxBody(email)).toContain(`/activate/${token}`);
    expect((await new Client(server.baseUrl).call('user.activate', { token })).status).toBe(200);
    expect(await outboxBody(email)).toContain('/activate/************');
    expect(await storedBodies(email)).not.toContain(token);
  });

  it('masks an activation link once it has expired', async () => {
    const { email, token } = await invitedMember();
    await server.deps.db
      .updateTable('users')
      .set({ activation_expires_at: new Date(Date.now() - 1000) })
      .where('email', '=', email)
      .execute();
    expect(await outboxBody(email)).not.toContain(token);
    expect(await storedBodies(email)).not.toContain(token);
  });

  it('masks a password reset link once it is used', async () => {
    const { email } = await createTestUser(server.deps, { accountId: null, permission: 0 });
    const anonymous = new Client(server.baseUrl);
    await anonymous.call('user.request_password_reset', { emailAddress: email });
    await new Promise((resolve) => setTimeout(resolve, 100)); // the mail is written after the answer
    const token = TOKEN.exec(await outboxBody(email))![1]!;
    const reset = await anonymous.call('user.reset_password', {
      token,
      emailAddress: email,
      newPassword: 'a-brand-new-password',
    });
    expect(reset.status, JSON.stringify(reset.body)).toBe(200);
    expect(await outboxBody(email)).toContain('token=************');
    expect(await storedBodies(email)).not.toContain(token);
  });
});

describe('the mail outbox with SMTP', () => {
  it('keeps only the masked body of a mail once it is sent', async () => {
    const { received, mailer, close } = await startSmtpSink(server.deps);
    const to = `${unique('smtp')}@example.com`;
    const secret = 'A'.repeat(43);
    try {
      await mailer.send({
        to,
        subject: 'Activate',
        text: `open http://console/activate/${secret}\n`,
        secret,
      });
      // The queue's worker sends it: the row is masked once it has.
      await until('the mail sent', async () => (received.length > 0 ? true : undefined));
      await until('the outbox updated', async () =>
        (await storedBodies(to)).includes(secret) ? undefined : true,
      );
    } finally {
      await close();
    }
    expect(received.join('')).toContain(secret);
    expect(await storedBodies(to)).toBe('open http://console/activate/************\n');
  });
});
