import { ALL_MEMBER_PERMISSIONS, ALL_PERMISSIONS, operations, OriginKind, Permission } from '@ukiyo/contract';
import { Secret, TOTP } from 'otpauth';
import { beforeAll, describe, expect, it } from 'vitest';
import { RESET_PER_EMAIL_AND_ADDRESS } from '../src/operations/users.ts';
import {
  Client,
  createTestUser,
  lastMail,
  loggedIn,
  loggedInAdministrator,
  PASSWORD,
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

const NEW_PASSWORD = 'a-brand-new-password';

function registration(
  overrides: { email?: string; memberCode?: string; serviceCode?: string; plan?: number } = {},
) {
  return {
    user: {
      emailAddress: overrides.email ?? `${unique('first')}@example.com`,
      fullName: 'First User',
      permission: ALL_MEMBER_PERMISSIONS,
    },
    organization: {
      name: 'New Org',
      serviceCode: overrides.serviceCode ?? unique('svc'),
      plan: overrides.plan ?? 2,
    },
    sakuraAccount: {
      sakuraAccountID: 0,
      sakuraMemberCode: overrides.memberCode ?? unique('MC'),
      name: 'New Account',
    },
    password: 'initial-password-1',
  };
}

/** Registers an organization and activates its first user through the mailed link. */
async function registeredTenant(plan = 2) {
  const input = registration({ plan });
  const registered = await admin.call('admin.register', input);
  expect(registered.status).toBe(200);
  const token = (await lastMail(server.deps, input.user.emailAddress)).link.split('/activate/')[1]!;
  expect((await new Client(server.baseUrl).call('user.activate', { token })).status).toBe(200);
  const owner = await loggedIn(server.baseUrl, input.user.emailAddress, input.password);
  const organizationID = (registered.body.organization as { organizationID: number }).organizationID;
  return { owner, email: input.user.emailAddress, password: input.password, organizationID };
}

async function addMember(owner: Client, permission: number, emailAddress = `${unique('m')}@example.com`) {
  const added = await owner.call('user.add', {
    user: { emailAddress, fullName: 'Member', permission },
    password: 'member-password-1',
  });
  expect(added.status, JSON.stringify(added.body)).toBe(200);
  const token = (await lastMail(server.deps, emailAddress)).link.split('/activate/')[1]!;
  await new Client(server.baseUrl).call('user.activate', { token });
  return {
    emailAddress,
    userID: (added.body.user as { userID: number }).userID,
    password: 'member-password-1',
  };
}

describe('registration and activation', () => {
  it('creates an organization whose first user is not activated until the mailed link is opened', async () => {
    const input = registration();
    const registered = await admin.call('admin.register', input);
    expect(registered.status).toBe(200);
    expect(registered.body.user).toMatchObject({ emailAddress: input.user.emailAddress, activatedAt: null });

    const mail = await lastMail(server.deps, input.user.emailAddress);
    expect(mail.subject).toContain('アカウントの有効化');
    expect(mail.link).toMatch(/\/activate\/[\w-]{43}$/);

    // Logging in before activation works, but everything else answers 'not activated'.
    const early = await loggedIn(server.baseUrl, input.user.emailAddress, input.password);
    expect((await early.call('organization.list')).body.error).toBe('not activated');

    const token = mail.link.split('/activate/')[1]!;
    const anonymous = new Client(server.baseUrl);
    expect((await anonymous.call('user.activate', { token })).body).toEqual({
      emailAddress: input.user.emailAddress,
    });
    expect((await anonymous.call('user.activate', { token })).body.error).toBe('already activated');
    expect((await anonymous.call('user.activate', { token: 'x'.repeat(43) })).body.error).toBe(
      'sql: no rows in result set',
    );
    expect((await early.call('organization.list')).status).toBe(200);
  });

  it('refuses an expired activation token', async () => {
    const input = registration();
    await admin.call('admin.register', input);
    const token = (await lastMail(server.deps, input.user.emailAddress)).link.split('/activate/')[1]!;
    await server.deps.db
      .updateTable('users')
      .set({ activation_expires_at: new Date(Date.now() - 1000) })
      .where('email', '=', input.user.emailAddress)
      .execute();
    expect(await new Client(server.baseUrl).call('user.activate', { token })).toMatchObject({
      status: 410,
      body: { error: 'token is expired' },
    });
  });

  it('activates by choosing a new password, allowed only for that user', async () => {
    const input = registration();
    const registered = await admin.call('admin.register', input);
    const userId = (registered.body.user as { userID: number }).userID;
    const user = await loggedIn(server.baseUrl, input.user.emailAddress, input.password);
    const stranger = await loggedIn(
      server.baseUrl,
      (await createTestUser(server.deps, { accountId: null, permission: 0 })).email,
    );
    expect(
      (
        await stranger.call('user.update_password', {
          userId,
          oldPassword: PASSWORD,
          newPassword: NEW_PASSWORD,
        })
      ).body.error,
    ).toBe('not found');
    expect(
      (await user.call('user.update_password', { userId, oldPassword: 'wrong', newPassword: NEW_PASSWORD }))
        .body.error,
    ).toBe('wrong old password');
    const changed = await user.call('user.update_password', {
      userId,
      oldPassword: input.password,
      newPassword: NEW_PASSWORD,
    });
    expect(changed.body.user).toMatchObject({ activatedAt: expect.any(String) });
    expect((await user.call('organization.list')).status).toBe(200);
    expect((await new Client(server.baseUrl).login(input.user.emailAddress, NEW_PASSWORD)).status).toBe(200);
  });

  it('reports duplicates on the fields they concern', async () => {
    const first = registration();
    await admin.call('admin.register', first);
    const again = await admin.call('admin.register', registration({ email: first.user.emailAddress }));
    expect(again.body).toEqual({
      error: 'validation error',
      invalids: { 'user.emailAddress': ['validation.duplicate'] },
    });
    const code = await admin.call(
      'admin.register',
      registration({ serviceCode: first.organization.serviceCode }),
    );
    expect(code.body.invalids).toEqual({ 'organization.serviceCode': ['validation.duplicate'] });
    const member = await admin.call(
      'admin.register',
      registration({ memberCode: first.sakuraAccount.sakuraMemberCode }),
    );
    expect(member.body.invalids).toEqual({ 'sakuraAccount.sakuraMemberCode': ['validation.duplicate'] });
  });

  it('delivers mail through SMTP when SMTP_URL is set', async () => {
    const { received, mailer, close } = await startSmtpSink(server.deps);
    const viaSmtp = await loggedIn(
      await server.withConfig({}, { mailer }),
      (await createTestUser(server.deps, { accountId: null, permission: ALL_PERMISSIONS })).email,
    );
    const input = registration();
    expect((await viaSmtp.call('admin.register', input)).status).toBe(200);
    await until('the mail sent', async () => (received.length > 0 ? true : undefined));
    expect(received).toHaveLength(1);
    expect(received[0]).toContain(`To: ${input.user.emailAddress}`);
    expect(received[0]).toMatch(/activate\//);
    await until('the outbox marked sent', async () => {
      const outbox = await server.deps.db
        .selectFrom('mail_outbox')
        .selectAll()
        .where('recipient', '=', input.user.emailAddress)
        .executeTakeFirstOrThrow();
      return outbox.sent_at ? true : undefined;
    });
    await close();
  });
});

describe('members and permissions', () => {
  it('lets a member grant only bits they hold, and drop but never regain their own', async () => {
    const { owner } = await registeredTenant();
    const limited = await addMember(owner, Permission.member | Permission.cache);
    const client = await loggedIn(server.baseUrl, limited.emailAddress, limited.password);
    const tooMuch = await client.call('user.add', {
      user: { emailAddress: `${unique('x')}@example.com`, fullName: 'X', permission: Permission.origin },
      password: 'member-password-1',
    });
    expect(tooMuch.body).toEqual({
      error: 'validation error',
      invalids: { 'user.permission': ['validation.permissionNotHeld'] },
    });
    const admin = await client.call('user.add', {
      user: { emailAddress: `${unique('x')}@example.com`, fullName: 'X', permission: Permission.admin },
      password: 'member-password-1',
    });
    expect(admin.body.invalids).toEqual({ 'user.permission': ['validation.permissionNotHeld'] });

    const dropped = await client.call('user.update', {
      oldEmailAddress: limited.emailAddress,
      emailAddress: limited.emailAddress,
      fullName: 'Member',
      permission: Permission.member,
    });
    expect(dropped.body.user).toMatchObject({ permission: Permission.member });
    const regained = await client.call('user.update', {
      oldEmailAddress: limited.emailAddress,
      emailAddress: limited.emailAddress,
      fullName: 'Member',
      permission: Permission.member | Permission.cache,
    });
    expect(regained.body.invalids).toEqual({ permission: ['validation.permissionNotHeld'] });
  });

  it('keeps at least one user with all permissions', async () => {
    const { owner, email } = await registeredTenant();
    const refusal = { status: 409, body: { error: 'at least one user must have all permissions' } };
    expect(
      await owner.call('user.update', {
        oldEmailAddress: email,
        emailAddress: email,
        fullName: 'Owner',
        permission: Permission.member,
      }),
    ).toMatchObject(refusal);
    expect(await owner.call('user.set_enabled', { emailAddress: email, enabled: false })).toMatchObject(
      refusal,
    );
    const second = await addMember(owner, ALL_MEMBER_PERMISSIONS);
    expect(
      (await owner.call('user.set_enabled', { emailAddress: second.emailAddress, enabled: false })).status,
    ).toBe(200);
    expect(await owner.call('user.delete', { userID: second.userID })).toMatchObject({ status: 200 });
  });

  it('ends the sessions of a disabled user and refuses their login', async () => {
    const { owner } = await registeredTenant();
    const member = await addMember(owner, Permission.statistics);
    const session = await loggedIn(server.baseUrl, member.emailAddress, member.password);
    await owner.call('user.set_enabled', { emailAddress: member.emailAddress, enabled: false });
    expect((await session.call('organization.list')).status).toBe(403);
    expect((await new Client(server.baseUrl).login(member.emailAddress, member.password)).body.error).toBe(
      'wrong email or password',
    );
  });

  it('enforces the plan’s user limit', async () => {
    const { owner } = await registeredTenant(1);
    await addMember(owner, Permission.statistics);
    await addMember(owner, Permission.statistics);
    const fourth = await owner.call('user.add', {
      user: { emailAddress: `${unique('x')}@example.com`, fullName: 'X', permission: Permission.statistics },
      password: 'member-password-1',
    });
    expect(fourth.body).toEqual({ error: 'too many users exist in organization' });
  });

  it('never reaches another organization’s members or tokens', async () => {
    const a = await registeredTenant();
    const b = await registeredTenant();
    const bMember = await addMember(b.owner, Permission.statistics);
    const bToken = await b.owner.call('auth_token.add', { authToken: { description: 'b' } });
    const bTokenId = (bToken.body.authToken as { authTokenID: number }).authTokenID;

    const refusals = [
      await a.owner.call('user.info', { userID: bMember.userID }),
      await a.owner.call('user.set_enabled', { emailAddress: bMember.emailAddress, enabled: false }),
      await a.owner.call('user.delete', { userID: bMember.userID }),
      await a.owner.call('user.update', {
        oldEmailAddress: bMember.emailAddress,
        emailAddress: bMember.emailAddress,
        fullName: 'Hijack',
        permission: 0,
      }),
      await a.owner.call('user.list', { organization_id: b.organizationID }),
      await a.owner.call('auth_token.disable', { authTokenID: bTokenId }),
      await a.owner.call('auth_token.delete', { authTokenID: bTokenId }),
      await a.owner.call('auth.change_organization', { organizationID: b.organizationID }),
    ];
    for (const refusal of refusals) expect(refusal.body).toEqual({ error: 'not found' });
    const list = await a.owner.call('user.list', {});
    expect(JSON.stringify(list.body)).not.toContain(bMember.emailAddress);
    const tokens = await a.owner.call('auth_token.list', { showDeleted: true });
    expect((tokens.body.authTokens as { authTokenID: number }[]).map((t) => t.authTokenID)).not.toContain(
      bTokenId,
    );
    expect((await b.owner.call('user.info', { userID: bMember.userID })).status).toBe(200);
  });
});

describe('permission matrix', () => {
  // Every operation of the contract that names permission bits, called by a member holding one
  // bit (or none): refused unless it holds every bit named; administrator-only operations are
  // refused to every member. Derived from the contract, so a new operation is covered at once.
  const gated = Object.values(operations).filter((op) => op.permission !== 0 && !op.adminOnly);
  const adminOnly = Object.values(operations).filter((op) => op.adminOnly);
  const bits = [
    0,
    Permission.channel,
    Permission.cache,
    Permission.statistics,
    Permission.member,
    Permission.origin,
    Permission.organization,
  ];

  it.each(bits)(
    'a member holding only bit %i is refused every operation gated by another bit',
    async (bit) => {
      const { owner } = await registeredTenant();
      const member = await addMember(owner, bit);
      const client = await loggedIn(server.baseUrl, member.emailAddress, member.password);
      for (const op of gated) {
        const result = await client.call(op.name, {});
        if ((bit & op.permission) === op.permission)
          expect(result.body.error, op.name).not.toBe('not enough permission');
        else expect(result.body, op.name).toEqual({ error: 'not enough permission' });
      }
      for (const op of adminOnly)
        expect((await client.call(op.name, {})).body, op.name).toEqual({ error: 'not enough permission' });
      expect((await client.call('auth_token.list', {})).status).toBe(200);
    },
  );
});

describe('API tokens', () => {
  it('shows the secret once, masks it afterwards, authenticates bearer calls, and revokes', async () => {
    const { owner, organizationID } = await registeredTenant();
    const added = await owner.call('auth_token.add', {
      authToken: { description: 'deploy', permission: Permission.cache },
    });
    const secret = (added.body.authToken as { token: string }).token;
    const encoded = added.body.encodedToken as string;
    expect(secret.length).toBeGreaterThanOrEqual(40);
    expect(JSON.parse(Buffer.from(encoded, 'base64').toString())).toEqual({ token: secret });
    expect(encoded.endsWith('=')).toBe(false);

    const list = await owner.call('auth_token.list', {});
    const listed = (list.body.authTokens as { token: string; authTokenID: number }[])[0]!;
    expect(listed.token).toBe(`************${secret.slice(-4)}`);
    const rows = await server.deps.db.selectFrom('auth_tokens').select('token_hash').execute();
    expect(rows.some((row) => row.token_hash.includes(secret))).toBe(false);

    const info = (auth: string) =>
      fetch(`${server.baseUrl}/api/token.info`, { method: 'POST', headers: { Authorization: auth } });
    const ok = await info(`Bearer ${encoded}`);
    expect(await ok.json()).toEqual({ ok: true, organizationID, permission: Permission.cache });
    expect((await info('Bearer bm90LWEtdG9rZW4')).status).toBe(401);
    expect((await info(`Bearer ${secret}`)).status).toBe(401);

    await owner.call('auth_token.disable', { authTokenID: listed.authTokenID });
    expect((await info(`Bearer ${encoded}`)).status).toBe(401);
    await owner.call('auth_token.delete', { authTokenID: listed.authTokenID });
    expect(((await owner.call('auth_token.list', {})).body.authTokens as unknown[]).length).toBe(0);
    const withDeleted = await owner.call('auth_token.list', { showDeleted: true });
    expect(withDeleted.body.authTokens).toMatchObject([{ deleted: true, enabled: false }]);
  });

  it('never issues a token holding more than its creator', async () => {
    const { owner } = await registeredTenant();
    const member = await addMember(owner, Permission.statistics);
    const client = await loggedIn(server.baseUrl, member.emailAddress, member.password);
    const unmasked = await client.call('auth_token.add', { authToken: { description: 'x' } });
    expect(unmasked.body.authToken).toMatchObject({ permission: Permission.statistics });
    const wider = await client.call('auth_token.add', { authToken: { permission: Permission.cache } });
    expect(wider.body.invalids).toEqual({ 'authToken.permission': ['validation.permissionNotHeld'] });
  });
});

describe('two-step login', () => {
  it('enrols with a code, then asks for a code or a single-use backup code at login', async () => {
    const { owner, email, password } = await registeredTenant();
    const begun = await owner.call('user.totp_begin');
    expect(begun.body.otpauthUri).toMatch(/^otpauth:\/\/totp\/Ukiyo:/);
    expect(begun.body.qrCodeDataUrl).toMatch(/^data:image\/png;base64,/);
    const totp = new TOTP({ secret: Secret.fromBase32(begun.body.secret as string), digits: 6, period: 30 });
    expect(
      (await owner.call('user.totp_enable', { code: '000000' === totp.generate() ? '111111' : '000000' }))
        .body.error,
    ).toBe('invalid verification code');
    const enableCode = totp.generate();
    const enabled = await owner.call('user.totp_enable', { code: enableCode });
    const backupCodes = enabled.body.backupCodes as string[];
    expect(backupCodes).toHaveLength(10);

    const second = new Client(server.baseUrl);
    const step1 = await second.login(email, password);
    expect(step1.body).toEqual({ user: null, organization: null, totpRequired: true });
    expect((await second.call('organization.list')).status).toBe(403);
    expect((await second.call('auth.verify_totp', { code: '123' })).body.error).toBe(
      'invalid verification code',
    );
    // The code that enabled it is spent: a login takes a later one (here the next step's, within
    // the allowed drift), and that one only once.
    expect((await second.call('auth.verify_totp', { code: enableCode })).body.error).toBe(
      'invalid verification code',
    );
    const nextCode = totp.generate({ timestamp: Date.now() + 30_000 });
    const step2 = await second.call('auth.verify_totp', { code: nextCode });
    expect(step2.body).toMatchObject({ user: { emailAddress: email, totpEnabled: true } });
    expect((await second.call('organization.list')).status).toBe(200);
    const replay = new Client(server.baseUrl);
    await replay.login(email, password);
    expect((await replay.call('auth.verify_totp', { code: nextCode })).body.error).toBe(
      'invalid verification code',
    );

    const third = new Client(server.baseUrl);
    await third.login(email, password);
    expect((await third.call('auth.verify_totp', { code: backupCodes[0]!.toUpperCase() })).status).toBe(200);
    const fourth = new Client(server.baseUrl);
    await fourth.login(email, password);
    expect((await fourth.call('auth.verify_totp', { code: backupCodes[0]! })).body.error).toBe(
      'invalid verification code',
    );

    expect((await owner.call('user.totp_disable', { password: 'wrong' })).body.error).toBe(
      'password is incorrect',
    );
    expect((await owner.call('user.totp_disable', { password })).status).toBe(200);
    expect((await new Client(server.baseUrl).login(email, password)).body.totpRequired).toBe(false);
  });

  it('throttles guesses of the second step per address, never the user elsewhere', async () => {
    const { owner, email, password } = await registeredTenant();
    const begun = await owner.call('user.totp_begin');
    const totp = new TOTP({ secret: Secret.fromBase32(begun.body.secret as string) });
    const enabled = await owner.call('user.totp_enable', { code: totp.generate() });
    const base = await server.withConfig({ TRUST_PROXY: true });
    const from = (address: string) => ({ headers: { 'X-Forwarded-For': address } });
    const guessing = from(`198.51.100.${1 + Math.floor(Math.random() * 250)}`);
    const client = new Client(base);
    await client.call('auth.login', { emailAddress: email, password }, guessing);
    for (let i = 0; i < 5; i++) await client.call('auth.verify_totp', { code: 'zzzzz-zzzzz' }, guessing);
    const locked = await client.call('auth.verify_totp', { code: totp.generate() }, guessing);
    expect(locked).toMatchObject({ status: 429, body: { error: 'too many attempts' } });
    expect(locked.headers.get('retry-after')).toBe('60');

    const user = new Client(base);
    const elsewhere = from(`203.0.113.${1 + Math.floor(Math.random() * 250)}`);
    await user.call('auth.login', { emailAddress: email, password }, elsewhere);
    const backupCode = (enabled.body.backupCodes as string[])[0]!;
    expect((await user.call('auth.verify_totp', { code: backupCode }, elsewhere)).status).toBe(200);
  });
});

describe('password reset', () => {
  it('mails a single-use link that needs the matching e-mail address', async () => {
    const { email } = await registeredTenant();
    const anonymous = new Client(server.baseUrl);
    expect((await anonymous.call('user.request_password_reset', { emailAddress: email })).body).toEqual({});
    expect(
      (await anonymous.call('user.request_password_reset', { emailAddress: 'nobody@example.com' })).body,
    ).toEqual({});
    await new Promise((resolve) => setTimeout(resolve, 50)); // the mail is written after the answer
    const mail = await lastMail(server.deps, email);
    const token = new URL(mail.link).searchParams.get('token')!;
    expect(mail.link).toMatch(/\/forget\/\?token=/);

    const reset = (emailAddress: string) =>
      anonymous.call('user.reset_password', { token, emailAddress, newPassword: NEW_PASSWORD });
    expect((await reset('other@example.com')).body.error).toBe('emailAddress not match');
    expect((await reset(email)).status).toBe(200);
    expect((await reset(email)).body.error).toBe('not valid user');
    expect((await new Client(server.baseUrl).login(email, NEW_PASSWORD)).status).toBe(200);
  });

  it('limits reset mails per e-mail and address, so requests from elsewhere still go out', async () => {
    const { email } = await registeredTenant();
    const client = new Client(await server.withConfig({ TRUST_PROXY: true }));
    const request = (address: string) =>
      client.call(
        'user.request_password_reset',
        { emailAddress: email },
        { headers: { 'X-Forwarded-For': address } },
      );
    const flooding = `198.51.100.${1 + Math.floor(Math.random() * 250)}`;
    for (let i = 0; i < RESET_PER_EMAIL_AND_ADDRESS.points; i++)
      expect((await request(flooding)).status).toBe(200);
    const refused = await request(flooding);
    expect(refused).toMatchObject({ status: 429, body: { error: 'too many attempts' } });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(3500);
    expect((await request(`203.0.113.${1 + Math.floor(Math.random() * 250)}`)).status).toBe(200);
  });
});

describe('plans', () => {
  it('upgrades at once, downgrades from next month, and needs sales for enterprise', async () => {
    const { owner } = await registeredTenant(2);
    expect((await owner.call('organization.plan_features')).body).toMatchObject({
      plan: 2,
      features: { originLimit: 5 },
    });
    expect((await owner.call('organization.change_plan', { newPlan: 4 })).body.error).toBe(
      'plan change needs sales',
    );
    expect((await owner.call('organization.change_plan', { newPlan: 2 })).body.error).toBe(
      'plan change invalid',
    );
    expect((await owner.call('organization.change_plan', { newPlan: 3 })).body).toMatchObject({
      plan: 3,
      pendingPlan: null,
    });
    const down = await owner.call('organization.change_plan', { newPlan: 1 });
    expect(down.body).toMatchObject({ plan: 3, pendingPlan: 1 });
    expect(new Date(down.body.effectiveAt as string).getUTCDate()).toBe(1);
  });

  it('refuses a downgrade the organization does not fit', async () => {
    const { owner } = await registeredTenant(3);
    for (let i = 0; i < 3; i++) await addMember(owner, Permission.statistics);
    expect((await owner.call('organization.change_plan', { newPlan: 1 })).body.error).toBe(
      'plan user count over limit',
    );
  });

  it('refuses a downgrade while origins need the larger plan', async () => {
    const { owner, organizationID } = await registeredTenant(3);
    const insert = (values: { kind: number; custom?: boolean }) => {
      const name = `${unique('o')}.img.localhost`;
      return server.deps.db
        .insertInto('origins')
        .values({
          organization_id: organizationID,
          name,
          origin_name: values.custom ? `${unique('images')}.example.com` : name,
          kind: values.kind,
          config: '{}',
          acl: '{"isAllowList":false,"cidrs":[]}',
        })
        .returning('id')
        .executeTakeFirstOrThrow();
    };
    const change = async (newPlan: number) =>
      (await owner.call('organization.change_plan', { newPlan })).body.error;
    const custom = await insert({ kind: OriginKind.http, custom: true });
    expect(await change(2)).toBe('plan custom domain in use');
    await server.deps.db.deleteFrom('origins').where('id', '=', custom.id).execute();
    await insert({ kind: OriginKind.s3 });
    expect(await change(1)).toBe('plan non-http origin in use');
    for (let i = 0; i < 5; i++) await insert({ kind: OriginKind.http });
    expect(await change(2)).toBe('plan origin count over limit');
  });
});

describe('audit', () => {
  it('records logins and logouts for the account activity screen', async () => {
    const { email, password } = await registeredTenant();
    const client = await loggedIn(server.baseUrl, email, password);
    await new Client(server.baseUrl).login(email, 'wrong-password');
    const entries = (await client.call('audit.list', {})).body.entries as { kind: string; email: string }[];
    expect(entries.slice(0, 2).map((entry) => entry.kind)).toEqual(['login_failed', 'login']);
    await client.call('auth.logout');
    const again = await loggedIn(server.baseUrl, email, password);
    expect(
      ((await again.call('audit.list', {})).body.entries as { kind: string }[]).map((e) => e.kind),
    ).toContain('logout');
  });
});
