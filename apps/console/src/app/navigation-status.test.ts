import { describe, expect, it } from 'vitest';
import { Permission } from '@ukiyo/contract';
import { member } from '@/testing/fixtures.ts';
import { buildNavigation } from './navigation.ts';

const user = member(Permission.statistics);

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
