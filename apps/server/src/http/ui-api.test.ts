import { operation, operations, Permission } from '@ukiyo/contract';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { AuthContext } from '../auth/session-store.ts';
import { invalidsOf } from '@ukiyo/contract';
import { accessRefusal } from './ui-api.ts';

function auth(values: {
  permission: number;
  activated?: boolean;
  organization?: 'image' | 'live' | null;
  pending?: boolean;
}) {
  return {
    sessionHash: 'h',
    secondFactorPending: values.pending ?? false,
    user: {
      id: 1,
      permission: values.permission,
      activated_at: values.activated === false ? null : new Date(),
    },
    organization: values.organization === null ? null : { id: 1, is_live: values.organization === 'live' },
  } as unknown as AuthContext;
}

const refusalOf = (name: keyof typeof operations, context: AuthContext | null) =>
  accessRefusal(operations[name], context)?.code;

describe('accessRefusal', () => {
  it('lets anyone call public operations', () => {
    expect(refusalOf('auth.login', null)).toBeUndefined();
    expect(refusalOf('user.whoami', null)).toBeUndefined();
  });

  it('needs a completed session for everything else', () => {
    expect(refusalOf('organization.list', null)).toBe('session is invalid');
    expect(refusalOf('organization.list', auth({ permission: 126, pending: true }))).toBe(
      'session is invalid',
    );
  });

  it('lets a user who is not activated only reach session operations', () => {
    const context = auth({ permission: 126, activated: false });
    expect(refusalOf('user.update_password', context)).toBeUndefined();
    expect(refusalOf('organization.list', context)).toBe('not activated');
  });

  it('needs a current organization, permission bits and the right kind of organization', () => {
    expect(refusalOf('origin.list', auth({ permission: 126, organization: null }))).toBe(
      'organization not selected',
    );
    expect(refusalOf('origin.list', auth({ permission: Permission.cache }))).toBe('not enough permission');
    expect(refusalOf('origin.list', auth({ permission: Permission.origin }))).toBeUndefined();
    expect(refusalOf('origin.list', auth({ permission: 126, organization: 'live' }))).toBe(
      'image not available',
    );
    expect(refusalOf('channel.list', auth({ permission: 126 }))).toBe('live streaming not available');
  });

  it('lets administrators pass every permission check but not the organization kind', () => {
    expect(refusalOf('admin.register', auth({ permission: 126 }))).toBe('not enough permission');
    expect(
      refusalOf('admin.register', auth({ permission: Permission.admin, organization: null })),
    ).toBeUndefined();
    expect(refusalOf('user.list', auth({ permission: Permission.admin }))).toBeUndefined();
  });

  it('requires every bit an operation names', () => {
    const both = operation('test.both', {
      input: z.object({}),
      output: z.object({}),
      access: 'organization',
      permission: Permission.cache | Permission.origin,
    });
    expect(accessRefusal(both, auth({ permission: Permission.cache }))?.code).toBe('not enough permission');
    expect(accessRefusal(both, auth({ permission: Permission.cache | Permission.origin }))).toBeUndefined();
  });
});

describe('invalidsOf', () => {
  it('joins nested paths and keeps message keys, replacing zod defaults by validation.invalid', () => {
    const schema = z.object({
      a: z.object({ b: z.array(z.string().min(2, 'validation.minLength|n=2')) }),
      c: z.number(),
    });
    const result = schema.safeParse({ a: { b: ['x'] }, c: 'nope' });
    expect(result.success).toBe(false);
    expect(invalidsOf(result.error!)).toEqual({
      'a.b.0': ['validation.minLength|n=2'],
      c: ['validation.invalid'],
    });
  });
});
