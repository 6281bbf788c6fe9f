import { ALL_MEMBER_PERMISSIONS, Permission } from '@ukiyo/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Client,
  createTenant,
  createTestUser,
  lastMail,
  loggedIn,
  loggedInAdministrator,
  startSmtpSink,
  testServer,
  type TestServer,
  unique,
} from './harness.ts';
import { until } from './processes.ts';

let server: TestServer;
let admin: Client;
beforeAll(async () => {
  server = await testServer();
  admin = await loggedInAdministrator(server);
});

const DAY = 86_400_000;
const iso = (offsetMs: number) => new Date(Date.now() + offsetMs).toISOString();

function statusEvent(overrides: Record<string, unknown> = {}) {
  return {
    kind: 'incident',
    title: unique('Delivery errors'),
    body: 'Some images answered 502.',
    state: 'resolved',
    startsAt: iso(-2 * DAY),
    endsAt: iso(-2 * DAY + 3_600_000),
    ...overrides,
  };
}

type Event = { statusEventID: number; title: string; state: string; startsAt: string };

async function publicList(): Promise<{ events: Event[]; externalUrl: string | null }> {
  const result = await new Client(server.baseUrl).call('status.list');
  expect(result.status).toBe(200);
  return result.body as unknown as { events: Event[]; externalUrl: string | null };
}

async function member(permission = ALL_MEMBER_PERMISSIONS) {
  const tenant = await createTenant(server.deps);
  const user = await createTestUser(server.deps, { accountId: tenant.accountId, permission });
  return { ...user, client: await loggedIn(server.baseUrl, user.email) };
}

describe('service status', () => {
  it('lets administrators create, update and delete events; the list is public', async () => {
    const input = statusEvent();
    const created = await admin.call('admin.status_save', input);
    expect(created.status).toBe(200);
    const event = (created.body as { event: Event & { endsAt: string | null } }).event;
    expect(event).toMatchObject({ title: input.title, kind: 'incident', state: 'resolved' });
    expect(event.statusEventID).toBeGreaterThan(0);

    const listed = await publicList();
    expect(listed.externalUrl).toBeNull();
    expect(listed.events.map((e) => e.title)).toContain(input.title);

    const updated = await admin.call('admin.status_save', {
      ...input,
      statusEventID: event.statusEventID,
      title: `${input.title} (updated)`,
      state: 'in_progress',
    });
    expect(updated.status).toBe(200);
    const after = (await publicList()).events.find((e) => e.statusEventID === event.statusEventID);
    expect(after).toMatchObject({ title: `${input.title} (updated)`, state: 'in_progress' });

    expect((await admin.call('admin.status_delete', { statusEventID: event.statusEventID })).status).toBe(
      200,
    );
    expect((await publicList()).events.some((e) => e.statusEventID === event.statusEventID)).toBe(false);
    const again = await admin.call('admin.status_delete', { statusEventID: event.statusEventID });
    expect(again.body.error).toBe('not found');
    const missing = await admin.call('admin.status_save', { ...input, statusEventID: event.statusEventID });
    expect(missing.body.error).toBe('not found');
  });

  it('refuses everyone but administrators', async () => {
    const { client } = await member();
    const save = await client.call('admin.status_save', statusEvent());
    expect(save.status).toBe(404);
    expect(save.body.error).toBe('not enough permission');
    const created = await admin.call('admin.status_save', statusEvent());
    const id = (created.body as { event: Event }).event.statusEventID;
    expect((await client.call('admin.status_delete', { statusEventID: id })).status).toBe(404);
    const anonymous = await new Client(server.baseUrl).call('admin.status_save', statusEvent());
    expect(anonymous.status).toBe(403);
  });

  it('validates the event', async () => {
    const bad = await admin.call('admin.status_save', {
      ...statusEvent(),
      title: '',
      kind: 'outage',
      startsAt: 'yesterday',
    });
    expect(bad.status).toBe(400);
    expect(bad.body.invalids).toMatchObject({
      title: ['validation.required'],
      kind: ['validation.invalid'],
      startsAt: ['validation.invalid'],
    });
    const reversed = await admin.call('admin.status_save', statusEvent({ endsAt: iso(-3 * DAY) }));
    expect(reversed.body.invalids).toEqual({ endsAt: ['validation.invalid'] });
  });

  it('lists the last three months, newest first, with scheduled maintenance ahead', async () => {
    const old = statusEvent({ startsAt: iso(-100 * DAY), endsAt: iso(-100 * DAY + 3_600_000) });
    const recent = statusEvent({ startsAt: iso(-80 * DAY), endsAt: iso(-80 * DAY + 3_600_000) });
    const ahead = statusEvent({
      kind: 'maintenance',
      state: 'scheduled',
      startsAt: iso(7 * DAY),
      endsAt: iso(7 * DAY + 7_200_000),
    });
    const open = statusEvent({ state: 'in_progress', startsAt: iso(-120 * DAY), endsAt: null });
    for (const input of [old, recent, ahead, open]) {
      expect((await admin.call('admin.status_save', input)).status).toBe(200);
    }
    const { events } = await publicList();
    const titles = events.map((e) => e.title);
    expect(titles).not.toContain(old.title);
    expect(titles).toContain(recent.title);
    // Still open: shown whenever it started.
    expect(titles).toContain(open.title);
    expect(titles.indexOf(ahead.title)).toBeLessThan(titles.indexOf(recent.title));
    const starts = events.map((e) => Date.parse(e.startsAt));
    expect(starts).toEqual([...starts].sort((a, b) => b - a));
  });

  it('names the external status page when STATUS_URL is set', async () => {
    const url = await server.withConfig({ STATUS_URL: 'https://status.example.com/' });
    const result = await new Client(url).call('status.list');
    expect(result.body.externalUrl).toBe('https://status.example.com/');
  });
});

function contact(overrides: Record<string, unknown> = {}) {
  return {
    service: 'image',
    category: 'usage',
    company: 'Example Co.',
    name: 'Hanako Example',
    emailAddress: `${unique('sender')}@example.com`,
    message: 'How do I sign URLs from Python?',
    agreement: true,
    ...overrides,
  };
}

describe('help centre contact form', () => {
  let smtp: Awaited<ReturnType<typeof startSmtpSink>> | undefined;
  afterAll(() => smtp?.close());

  it('answers the validation messages of the contract', async () => {
    const { client } = await member();
    const empty = await client.call('user.mail', {
      service: '',
      category: '',
      name: '',
      emailAddress: 'not-an-address',
      message: '',
      agreement: false,
    });
    expect(empty.status).toBe(400);
    expect(empty.body.invalids).toMatchObject({
      service: ['validation.required'],
      category: ['validation.required'],
      name: ['validation.required'],
      message: ['validation.required'],
      emailAddress: ['validation.email'],
      agreement: ['validation.agreement'],
    });
    const noAgreement = await client.call('user.mail', contact({ agreement: undefined }));
    expect(noAgreement.body.invalids).toEqual({ agreement: ['validation.agreement'] });
  });

  it('needs a session with an organization', async () => {
    expect((await new Client(server.baseUrl).call('user.mail', contact())).status).toBe(403);
  });

  it('stores the request and mails support and the sender through SMTP', async () => {
    smtp = await startSmtpSink(server.deps);
    const { received, mailer } = smtp;
    const support = `${unique('support')}@example.com`;
    const url = await server.withConfig({ SUPPORT_EMAIL: support }, { mailer });
    const { email, userId } = await member(Permission.statistics);
    const client = await loggedIn(url, email);
    const input = contact();
    const result = await client.call('user.mail', input);
    expect(result.status).toBe(200);
    expect(result.body).toEqual({});

    const stored = await server.deps.db
      .selectFrom('help_requests')
      .selectAll()
      .where('user_id', '=', userId)
      .executeTakeFirstOrThrow();
    expect(stored).toMatchObject({
      service: 'image',
      category: 'usage',
      company: 'Example Co.',
      name: 'Hanako Example',
      email: input.emailAddress,
      message: input.message,
    });
    expect(stored.organization_id).not.toBeNull();

    await until('both mails sent', async () => (received.length === 2 ? true : undefined));
    expect(received[0]).toContain(`To: ${support}`);
    expect(received[1]).toContain(`To: ${input.emailAddress}`);
    const toSupport = await lastMail(server.deps, support);
    expect(toSupport.body).toContain(input.message);
    expect(toSupport.body).toContain(email);
    expect(toSupport.body).toContain(`Reply to: ${input.emailAddress}`);
    const confirmation = await lastMail(server.deps, input.emailAddress);
    expect(confirmation.body).toContain('2-3 business days');
    await until('both mails marked sent', async () => {
      const sent = await server.deps.db
        .selectFrom('mail_outbox')
        .select('sent_at')
        .where('recipient', 'in', [support, input.emailAddress])
        .execute();
      return sent.every((row) => row.sent_at !== null) ? true : undefined;
    });
  });

  it('goes to the default support address without SMTP', async () => {
    const { client } = await member();
    const input = contact();
    expect((await client.call('user.mail', input)).status).toBe(200);
    const mail = await lastMail(server.deps, 'support@ukiyo.localhost');
    expect(mail.body).toContain(input.emailAddress);
  });

  it('limits how often one user writes', async () => {
    const { client } = await member();
    for (let i = 0; i < 5; i++) expect((await client.call('user.mail', contact())).status).toBe(200);
    const locked = await client.call('user.mail', contact());
    expect(locked.status).toBe(429);
    expect(locked.body.error).toBe('too many attempts');
    // Another user is not affected.
    expect((await (await member()).client.call('user.mail', contact())).status).toBe(200);
  });
});
