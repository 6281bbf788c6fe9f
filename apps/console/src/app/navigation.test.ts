import { describe, expect, it } from 'vitest';
import { Permission } from '@ukiyo/contract';
import type { Session } from '@/lib/session.ts';
import { member, organization } from '@/testing/fixtures.ts';
import { buildNavigation, type MenuEntry } from './navigation.ts';

const SITE = 'https://service.example/';

const ids = (entries: readonly MenuEntry[]): unknown[] =>
  entries.map((entry) => (entry.kind === 'group' ? { [entry.id]: ids(entry.children) } : entry.id));
const menu = (session: Session) => buildNavigation(session, SITE);

describe('buildNavigation', () => {
  it('offers the guest preview, documentation and the service site to visitors', () => {
    const navigation = menu({ user: null, organization: null });
    expect(ids(navigation.main)).toEqual(['previewGuest', 'docs', 'serviceSite']);
    expect(navigation.main[2]).toMatchObject({ kind: 'external', href: SITE });
    expect(navigation.account).toBeNull();
  });

  it('gives administrators their own menu', () => {
    const navigation = menu({ user: member(Permission.admin), organization: organization(false) });
    expect(ids(navigation.main)).toEqual([
      'originIndex',
      'adminStatistics',
      { liveStreamingGroup: ['liveStreaming', 'channel'] },
      'adminInvoices',
      'preview',
      'cache',
    ]);
  });

  it('filters the live menu by permission', () => {
    const all = menu({ user: member(127 & ~Permission.admin), organization: organization(true) });
    expect(ids(all.main)).toEqual(['dashboard', 'channel', 'liveStreaming', 'statistics', 'cache']);
    expect(all.main[3]).toMatchObject({ labelKey: 'nav.hlsStatistics' });
    const channelOnly = menu({ user: member(Permission.channel), organization: organization(true) });
    expect(ids(channelOnly.main)).toEqual(['dashboard', 'channel']);
  });

  it('filters the regular menu by permission; preview needs none', () => {
    expect(ids(menu({ user: member(0), organization: organization(false) }).main)).toEqual([
      'dashboard',
      'preview',
    ]);
    expect(
      ids(
        menu({ user: member(Permission.origin | Permission.cache), organization: organization(false) }).main,
      ),
    ).toEqual(['dashboard', 'originIndex', 'preview', 'cache']);
  });

  it('empties the menu without activation or organization, keeping the account menu', () => {
    const inactive = menu({ user: member(127, { activatedAt: null }), organization: organization(false) });
    expect(inactive.main).toEqual([]);
    expect(inactive.account?.items).toEqual([]);
    const noOrganization = menu({ user: member(127 & ~Permission.admin), organization: null });
    expect(noOrganization.main).toEqual([]);
    expect(ids(noOrganization.right)).toEqual(['status', 'docs']);
    expect(ids(noOrganization.account?.items ?? [])).toEqual(['changeOrganization', 'userUpdate']);
  });

  it('titles the account menu and gates its items by permission', () => {
    const plain = menu({ user: member(0), organization: organization(false) });
    expect(plain.account).toMatchObject({
      memberCode: 'M0001',
      serviceCode: 'svc',
      emailAddress: 'me@example.com',
    });
    expect(ids(plain.account?.items ?? [])).toEqual(['changeOrganization', 'userUpdate', 'tokenIndex']);
    expect(ids(plain.right)).toEqual(['status', 'docs', 'help']);
    const manager = menu({
      user: member(Permission.member | Permission.organization),
      organization: organization(false),
    });
    expect(ids(manager.account?.items ?? [])).toEqual([
      'changeOrganization',
      'userUpdate',
      'memberIndex',
      'tokenIndex',
      'organizationUpdate',
    ]);
  });

  it('adds the organization register, the mail outbox and failed jobs for administrators only', () => {
    const administrator = menu({ user: member(Permission.admin), organization: organization(false) });
    expect(ids(administrator.account?.items ?? [])).toEqual([
      'changeOrganization',
      'userUpdate',
      'memberIndex',
      'tokenIndex',
      'organizationUpdate',
      'userCreate',
      'adminOutbox',
      'adminJobs',
    ]);
    const full = menu({ user: member(127 & ~Permission.admin), organization: organization(false) });
    expect(ids(full.account?.items ?? [])).not.toContain('adminOutbox');
    expect(ids(full.account?.items ?? [])).not.toContain('adminJobs');
  });
});
