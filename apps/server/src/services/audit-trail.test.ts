import { describe, expect, it } from 'vitest';
import { changedFields, MASK, maskSecrets } from './audit-trail.ts';

describe('audit trail states', () => {
  it('masks secret fields at any depth and leaves empty secrets empty', () => {
    expect(
      maskSecrets({
        signingSecret: 'abc',
        config: { secretAccessKey: 'xyz', bucket: 'b' },
        rules: [{ password: 'p', pattern: '*' }],
        privateKey: '',
        authTokenID: 4,
      }),
    ).toEqual({
      signingSecret: MASK,
      config: { secretAccessKey: MASK, bucket: 'b' },
      rules: [{ password: MASK, pattern: '*' }],
      privateKey: '',
      authTokenID: 4,
    });
  });

  it('keeps only the fields that changed, a changed secret as masked on both sides', () => {
    const before = { name: 'a', signingSecret: 'old', acl: { cidrs: [] }, cache: 0 };
    const after = { name: 'a', signingSecret: 'new', acl: { cidrs: ['192.0.2.1'] }, cache: 0 };
    expect(changedFields(before, after)).toEqual({
      before: { signingSecret: MASK, acl: { cidrs: [] } },
      after: { signingSecret: MASK, acl: { cidrs: ['192.0.2.1'] } },
    });
    expect(changedFields(before, before)).toEqual({ before: {}, after: {} });
  });

  it('keeps a whole state, masked, on creation and deletion', () => {
    expect(changedFields(undefined, { token: 'secret', enabled: true })).toEqual({
      before: null,
      after: { token: MASK, enabled: true },
    });
    expect(changedFields({ signingSecret: 's' }, undefined)).toEqual({
      before: { signingSecret: MASK },
      after: null,
    });
  });
});
