import { describe, expect, it } from 'vitest';
import { ERRORS, errorMessageKey } from './errors.ts';
import { MESSAGES, messageRef, parseMessageRef } from './messages.ts';
import { operations } from './operations/index.ts';
import { OriginInput } from './operations/origin.ts';
import { hasPermission, Permission, tokenHasPermission } from './permissions.ts';
import { normalisePlan, planFeatures } from './plans.ts';

const messagesOf = (result: { success: boolean; error?: { issues: { message: string }[] } }) =>
  result.error?.issues.map((issue) => issue.message) ?? [];

describe('operations', () => {
  it('names each operation by its key, in area.verb form', () => {
    for (const [key, op] of Object.entries(operations)) {
      expect(op.name).toBe(key);
      expect(key).toMatch(/^[a-z_]+\.[a-z_]+$/);
    }
  });

  it('declares every call of console-spec section 7', () => {
    const section7 = [
      'auth.login',
      'auth.logout',
      'auth.change_organization',
      'user.whoami',
      'admin.list_organizations',
      'admin.register',
      'organization.list',
      'organization.plan_features',
      'organization.change_plan',
      'user.update',
      'user.add',
      'user.set_enabled',
      'user.update_password',
      'user.mail',
      'user.info',
      'user.list',
      'origin.list',
      'origin.list_minimum',
      'origin.add',
      'origin.update',
      'origin.delete',
      'origin.upload_tls_certificate',
      'statistics.origins',
      'auth_token.list',
      'auth_token.add',
      'auth_token.disable',
    ];
    for (const name of section7) expect(operations).toHaveProperty([name]);
  });
});

describe('validation messages', () => {
  it('uses the spec’s keys for required, e-mail and length', () => {
    const login = operations['auth.login'].input;
    expect(messagesOf(login.safeParse({}))).toEqual(['validation.required', 'validation.required']);
    expect(messagesOf(login.safeParse({ emailAddress: 'a@b.c', password: 'x' }))).toEqual([
      'validation.email',
    ]);
    expect(login.safeParse({ emailAddress: 'a.b+c@example.co.jp', password: 'x' }).success).toBe(true);
    const add = operations['user.add'].input;
    const tooLong = add.safeParse({
      user: { emailAddress: 'a@ex.com', fullName: 'x', permission: 0 },
      password: 'p'.repeat(129),
    });
    expect(messagesOf(tooLong)).toContain('validation.maxLength|n=128');
  });

  it('validates origins: host names, cache bounds, rewrite host, duplicate patterns, empty parameters', () => {
    const base = {
      kind: 0,
      config: { scheme: 'https', host: 'images.example.com', pathPrefix: '/p', rewriteHost: '' },
    };
    const ok = OriginInput.safeParse(base);
    expect(ok.success && ok.data.config.pathPrefix).toBe('p');
    expect(
      messagesOf(OriginInput.safeParse({ ...base, config: { ...base.config, host: 'bad host' } })),
    ).toEqual(['validation.host']);
    expect(messagesOf(OriginInput.safeParse({ ...base, defaultCache: 2147483648 }))).toEqual([
      'validation.between|min=0&max=2147483647',
    ]);
    expect(
      messagesOf(
        OriginInput.safeParse({ ...base, config: { ...base.config, rewriteHost: 'h'.repeat(260) } }),
      ),
    ).toEqual(['validation.maxLength|n=259']);
    const rules = [
      { pattern: '/a', parameter: 'w=100' },
      { pattern: 'a', parameter: ' ' },
    ];
    expect(messagesOf(OriginInput.safeParse({ ...base, conversionParameters: rules }))).toEqual([
      'validation.required',
      'validation.duplicate',
    ]);
    expect(messagesOf(OriginInput.safeParse({ ...base, enableSignedUrl: true }))).toEqual([
      'validation.required',
    ]);
    expect(messagesOf(OriginInput.safeParse({ ...base, signingSecret: 'あ' }))).toEqual([
      'validation.printableAscii',
    ]);
  });
});

describe('messages and errors', () => {
  it('gives every error code a message with Japanese and English text', () => {
    for (const [code, { message }] of Object.entries(ERRORS)) {
      expect(MESSAGES, code).toHaveProperty([message]);
      expect(errorMessageKey(code)).toBe(message);
    }
    expect(errorMessageKey('something else')).toBe('error.internal');
    for (const text of Object.values(MESSAGES)) {
      expect(text.ja.length).toBeGreaterThan(0);
      expect(text.en.length).toBeGreaterThan(0);
    }
  });

  it('round-trips message references with parameters', () => {
    expect(parseMessageRef(messageRef('validation.between', { min: 0, max: 10 }))).toEqual({
      key: 'validation.between',
      params: { min: '0', max: '10' },
    });
    expect(parseMessageRef('validation.required')).toEqual({ key: 'validation.required', params: {} });
  });
});

describe('permissions and plans', () => {
  it('lets administrators pass every check and requires every named bit otherwise', () => {
    expect(hasPermission(Permission.admin, Permission.origin | Permission.cache)).toBe(true);
    expect(hasPermission(Permission.origin, Permission.origin | Permission.cache)).toBe(false);
    expect(hasPermission(Permission.origin | Permission.cache, Permission.cache)).toBe(true);
  });

  it('gives tokens a flag when unset, set, or administrator', () => {
    expect(tokenHasPermission(null, Permission.cache)).toBe(true);
    expect(tokenHasPermission(Permission.cache, Permission.cache)).toBe(true);
    expect(tokenHasPermission(Permission.admin, Permission.cache)).toBe(true);
    expect(tokenHasPermission(Permission.statistics, Permission.cache)).toBe(false);
  });

  it('counts plans above 4 as 4 and defaults to 4', () => {
    expect(normalisePlan(7)).toBe(4);
    expect(normalisePlan(undefined)).toBe(4);
    expect(normalisePlan(2)).toBe(2);
    expect(planFeatures(1).originLimit).toBeLessThan(planFeatures(4).originLimit);
    expect(planFeatures(4).userLimit).toBeNull();
  });
});
