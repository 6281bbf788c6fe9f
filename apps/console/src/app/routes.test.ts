import { describe, expect, it } from 'vitest';
import { paths } from './paths.ts';
import { routes } from './routes.ts';

describe('paths', () => {
  it('adds query parameters only when given, encoded', () => {
    expect(paths.userCreate()).toBe('/user/create');
    expect(paths.userCreate({ organization: 12 })).toBe('/user/create?organization=12');
    expect(paths.forget()).toBe('/forget/');
    expect(paths.forget({ token: 'a+b/c=' })).toBe('/forget/?token=a%2Bb%2Fc%3D');
  });

  it('builds the account activity and outbox pages', () => {
    expect(paths.userActivity()).toBe('/user/activity');
    expect(paths.adminOutbox()).toBe('/admin/outbox');
    expect(paths.memberUpdate(7)).toBe('/member/7/update');
    expect(paths.activate('tok-_1')).toBe('/activate/tok-_1');
  });
});

describe('routes', () => {
  it('opens the dashboard to any member of an organization and keeps usage pages lazy', () => {
    expect(paths.dashboard()).toBe('/dashboard');
    expect(routes.dashboard.guard).toEqual({ access: 'organization' });
    expect(routes.adminInvoices.guard).toMatchObject({ access: 'activated', adminOnly: true });
    for (const id of ['dashboard', 'statistics', 'adminStatistics', 'adminInvoices'] as const) {
      expect(routes[id].page, id).toBeTypeOf('function');
    }
  });

  it('keeps the outbox and failed jobs for administrators and the activity for any activated user', () => {
    expect(routes.adminOutbox.guard).toMatchObject({ access: 'activated', adminOnly: true });
    expect(paths.adminJobs()).toBe('/admin/jobs');
    expect(routes.adminJobs.guard).toMatchObject({ access: 'activated', adminOnly: true });
    expect(routes.userActivity.guard).toEqual({ access: 'activated' });
  });

  it('gives every built screen its own lazily loaded page', () => {
    for (const id of [
      'memberIndex',
      'memberNew',
      'memberUpdate',
      'tokenIndex',
      'tokenNew',
      'plan',
      'organizationUpdate',
      'userUpdate',
      'userActivity',
      'userCreate',
      'adminOutbox',
      'adminJobs',
      'activate',
      'forget',
    ] as const) {
      expect(routes[id].page, id).toBeTypeOf('function');
      expect(routes[id].page, id).not.toBe(routes.help.page);
    }
  });
});
