import { describe, expect, it } from 'vitest';
import { Permission, type Organization, type User } from '@ukiyo/contract';
import type { Session } from '../lib/session.ts';
import { buildNavigation, type MenuEntry } from './navigation.ts';

const SITE = 'https://service.example/';

const user = (permission: number, activatedAt: string | null = '2025-07-01T00:00:00Z'): User => ({
  userID: 9,
  emailAddress: 'ops@example.jp',
  fullName: 'Ops',
  permission,
  enabled: true,
  activatedAt,
  sakuraAccount: { sakuraAccountID: 1, sakuraMemberCode: 'xyz00001', name: 'Xyz' },
  restriction: { organizationIDs: [] },
  totpEnabled: false,
});
const organization = (isLive: boolean): Organization => ({
  organizationID: 4,
  name: 'Xyz',
  memberCode: 'xyz00001',
  serviceCode: 'svc-9',
  serviceDomain: '',
  plan: 4,
  features: { imageConversion: !isLive, live: isLive },
  isLive,
  enableTextOverlay: false,
  description: '',
  sakuraAccount: { sakuraAccountID: 1, sakuraMemberCode: 'xyz00001', name: 'Xyz' },
});

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
    const navigation = menu({ user: user(Permission.admin), organization: organization(false) });
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
    const all = menu({ user: user(127 & ~Permission.admin), organization: organization(true) });
    expect(ids(all.main)).toEqual(['dashboard', 'channel', 'liveStreaming', 'statistics', 'cache']);
    expect(all.main[3]).toMatchObject({ labelKey: 'nav.hlsStatistics' });
    const channelOnly = menu({ user: user(Permission.channel), organization: organization(true) });
    expect(ids(channelOnly.main)).toEqual(['dashboard', 'channel']);
  });

  it('filters the regular menu by permission; preview needs none', () => {
    expect(ids(menu({ user: user(0), organization: organization(false) }).main)).toEqual([
      'dashboard',
      'preview',
    ]);
    expect(
      ids(menu({ user: user(Permission.origin | Permission.cache), organization: organization(false) }).main),
    ).toEqual(['dashboard', 'originIndex', 'preview', 'cache']);
  });

  it('empties the menu without activation or organization, keeping the account menu', () => {
    const inactive = menu({ user: user(127, null), organization: organization(false) });
    expect(inactive.main).toEqual([]);
    expect(inactive.account?.items).toEqual([]);
    const noOrganization = menu({ user: user(127 & ~Permission.admin), organization: null });
    expect(noOrganization.main).toEqual([]);
    expect(ids(noOrganization.right)).toEqual(['status', 'docs']);
    expect(ids(noOrganization.account?.items ?? [])).toEqual(['changeOrganization', 'userUpdate']);
  });

  it('titles the account menu and gates its items by permission', () => {
    const plain = menu({ user: user(0), organization: organization(false) });
    expect(plain.account).toMatchObject({
      memberCode: 'xyz00001',
      serviceCode: 'svc-9',
      emailAddress: 'ops@example.jp',
    });
    expect(ids(plain.account?.items ?? [])).toEqual(['changeOrganization', 'userUpdate', 'tokenIndex']);
    expect(ids(plain.right)).toEqual(['status', 'docs', 'help']);
    const manager = menu({
      user: user(Permission.member | Permission.organization),
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
    const administrator = menu({ user: user(Permission.admin), organization: organization(false) });
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
    const full = menu({ user: user(127 & ~Permission.admin), organization: organization(false) });
    expect(ids(full.account?.items ?? [])).not.toContain('adminOutbox');
    expect(ids(full.account?.items ?? [])).not.toContain('adminJobs');
  });
});
