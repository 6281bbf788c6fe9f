import { describe, expect, it } from 'vitest';
import { Permission, type User } from '@ukiyo/contract';
import { buildNavigation } from './navigation.ts';

const user: User = {
  userID: 9,
  emailAddress: 'ops@example.jp',
  fullName: 'Ops',
  permission: Permission.statistics,
  enabled: true,
  activatedAt: '2025-07-01T00:00:00Z',
  sakuraAccount: { sakuraAccountID: 1, sakuraMemberCode: 'xyz00001', name: 'Xyz' },
  restriction: { organizationIDs: [] },
  totpEnabled: false,
};

describe('the status link', () => {
  it('opens /status inside the console without STATUS_URL', () => {
    for (const session of [
      { user: null, organization: null },
      { user, organization: null },
    ]) {
      const [status] = buildNavigation(session, 'https://site.example/').right;
      expect(status).toMatchObject({ kind: 'link', id: 'status', to: '/status' });
    }
  });

  it('points to the external status page when one is set', () => {
    for (const session of [
      { user: null, organization: null },
      { user, organization: null },
    ]) {
      const [status] = buildNavigation(session, 'https://site.example/', 'https://status.example/').right;
      expect(status).toEqual({
        kind: 'external',
        id: 'status',
        labelKey: 'nav.status',
        href: 'https://status.example/',
      });
    }
  });
});
