import type { ComponentType } from 'react';
import type { LazyRouteFunction, RouteObject } from 'react-router';
import { Permission, type Access, type OrganizationKind } from '@ukiyo/contract';
import { routePatterns, type RouteID } from './paths.ts';

/**
 * Who may open a route (console-spec sections 2 and 6). `access` uses the contract's ladder so
 * a page asks for what its operations will: a route is never more open than its calls.
 * 'guest' is the login page: only for the logged-out.
 */
export interface RouteGuard {
  access: Access | 'guest';
  /** Permission bits all required; administrators pass. */
  permission?: number;
  adminOnly?: boolean;
  organizationKind?: OrganizationKind;
  /** The route parameter naming a user: only that user or an activated administrator may open it. */
  ownUserParam?: string;
  /** '/': always sends the user on to the page their permissions open first. */
  home?: boolean;
}

type PageModule = LazyRouteFunction<RouteObject>;

/** A route's settings; its pattern is in `routePatterns` (paths.ts). */
export interface ConsoleRoute {
  guard: RouteGuard;
  titleKey: string;
  /** The title in a live organization, where the same page reads differently. */
  liveTitleKey?: string;
  page?: PageModule;
}

/** A page fetched the first time its route is opened, so the entry chunk holds none. */
function lazyPage<M extends Record<K, ComponentType>, K extends string>(
  load: () => Promise<M>,
  name: K,
): PageModule {
  return () => load().then((module) => ({ Component: module[name] }));
}

// '/404' and any unknown URL show the same page.
const notFound = lazyPage(() => import('@/features/errors/components/not-found-page.tsx'), 'NotFoundPage');

const PUBLIC: RouteGuard = { access: 'public' };
const ORGANIZATION: RouteGuard = { access: 'organization' };
const ADMIN: RouteGuard = { access: 'activated', adminOnly: true };
const ORIGINS: RouteGuard = {
  access: 'organization',
  permission: Permission.origin,
  organizationKind: 'image',
};
const MEMBERS: RouteGuard = { access: 'organization', permission: Permission.member };

/** What each route of `routePatterns` requires, is called and shows (console-spec section 2). */
const routeSettings = {
  home: { guard: { access: 'organization', home: true }, titleKey: 'title.home' },
  dashboard: {
    guard: ORGANIZATION,
    titleKey: 'title.dashboard',
    page: lazyPage(() => import('@/features/usage/components/dashboard-page.tsx'), 'DashboardPage'),
  },
  originIndex: {
    guard: ORIGINS,
    titleKey: 'title.originIndex',
    page: lazyPage(() => import('@/features/origin/components/origin-index-page.tsx'), 'OriginIndexPage'),
  },
  originCreate: {
    guard: ORIGINS,
    titleKey: 'title.originCreate',
    page: lazyPage(() => import('@/features/origin/components/origin-edit-pages.tsx'), 'OriginCreatePage'),
  },
  originCopy: {
    guard: ORIGINS,
    titleKey: 'title.originCopy',
    page: lazyPage(() => import('@/features/origin/components/origin-edit-pages.tsx'), 'OriginCopyPage'),
  },
  originUpdate: {
    guard: ORIGINS,
    titleKey: 'title.originUpdate',
    page: lazyPage(() => import('@/features/origin/components/origin-edit-pages.tsx'), 'OriginUpdatePage'),
  },
  originCert: {
    guard: ORIGINS,
    titleKey: 'title.originCert',
    page: lazyPage(() => import('@/features/origin/components/origin-cert-page.tsx'), 'OriginCertPage'),
  },
  originDestroy: {
    guard: ORIGINS,
    titleKey: 'title.originDestroy',
    page: lazyPage(() => import('@/features/origin/components/origin-destroy-page.tsx'), 'OriginDestroyPage'),
  },
  cache: {
    guard: { access: 'organization', permission: Permission.cache },
    titleKey: 'title.cache',
    page: lazyPage(() => import('@/features/cache/components/cache-page.tsx'), 'CachePage'),
  },
  liveStreaming: {
    guard: { access: 'organization', permission: Permission.statistics, organizationKind: 'live' },
    titleKey: 'title.liveStreaming',
    page: lazyPage(
      () => import('@/features/channel/components/live-streaming-page.tsx'),
      'LiveStreamingPage',
    ),
  },
  channel: {
    guard: { access: 'organization', permission: Permission.channel, organizationKind: 'live' },
    titleKey: 'title.channel',
    page: lazyPage(() => import('@/features/channel/components/channel-page.tsx'), 'ChannelPage'),
  },
  statistics: {
    guard: { access: 'organization', permission: Permission.statistics },
    titleKey: 'title.statistics',
    liveTitleKey: 'title.hlsStatistics',
    page: lazyPage(() => import('@/features/usage/components/statistics-page.tsx'), 'StatisticsPage'),
  },
  preview: {
    guard: { access: 'organization', organizationKind: 'image' },
    titleKey: 'title.preview',
    page: lazyPage(() => import('@/features/preview/components/preview-page.tsx'), 'PreviewPage'),
  },
  plan: {
    guard: { access: 'organization', permission: Permission.organization, organizationKind: 'image' },
    titleKey: 'title.plan',
    page: lazyPage(() => import('@/features/plan/components/plan-page.tsx'), 'PlanPage'),
  },
  memberIndex: {
    guard: MEMBERS,
    titleKey: 'title.memberIndex',
    page: lazyPage(() => import('@/features/member/components/member-index-page.tsx'), 'MemberIndexPage'),
  },
  memberNew: {
    guard: MEMBERS,
    titleKey: 'title.memberNew',
    page: lazyPage(() => import('@/features/member/components/member-new-page.tsx'), 'MemberNewPage'),
  },
  memberUpdate: {
    guard: MEMBERS,
    titleKey: 'title.memberUpdate',
    page: lazyPage(() => import('@/features/member/components/member-update-page.tsx'), 'MemberUpdatePage'),
  },
  tokenIndex: {
    guard: ORGANIZATION,
    titleKey: 'title.tokenIndex',
    page: lazyPage(() => import('@/features/token/components/token-index-page.tsx'), 'TokenIndexPage'),
  },
  tokenNew: {
    guard: ORGANIZATION,
    titleKey: 'title.tokenNew',
    page: lazyPage(() => import('@/features/token/components/token-new-page.tsx'), 'TokenNewPage'),
  },
  help: {
    guard: ORGANIZATION,
    titleKey: 'title.help',
    page: lazyPage(() => import('@/features/help/components/help-page.tsx'), 'HelpPage'),
  },
  organizationUpdate: {
    guard: { access: 'organization', permission: Permission.organization },
    titleKey: 'title.organizationUpdate',
    page: lazyPage(
      () => import('@/features/organization/components/organization-update-page.tsx'),
      'OrganizationUpdatePage',
    ),
  },
  adminStatistics: {
    guard: ADMIN,
    titleKey: 'title.adminStatistics',
    page: lazyPage(
      () => import('@/features/usage/components/admin-statistics-page.tsx'),
      'AdminStatisticsPage',
    ),
  },
  adminInvoices: {
    guard: ADMIN,
    titleKey: 'title.adminInvoices',
    page: lazyPage(() => import('@/features/usage/components/admin-invoices-page.tsx'), 'AdminInvoicesPage'),
  },
  userCreate: {
    guard: ADMIN,
    titleKey: 'title.userCreate',
    page: lazyPage(() => import('@/features/admin/components/user-create-page.tsx'), 'UserCreatePage'),
  },
  adminOutbox: {
    guard: ADMIN,
    titleKey: 'title.adminOutbox',
    page: lazyPage(() => import('@/features/admin/components/outbox-page.tsx'), 'OutboxPage'),
  },
  adminJobs: {
    guard: ADMIN,
    titleKey: 'title.adminJobs',
    page: lazyPage(() => import('@/features/admin/components/dead-letters-page.tsx'), 'DeadLettersPage'),
  },
  userUpdate: {
    guard: { access: 'activated' },
    titleKey: 'title.userUpdate',
    page: lazyPage(() => import('@/features/user/components/user-update-page.tsx'), 'UserUpdatePage'),
  },
  userActivity: {
    guard: { access: 'activated' },
    titleKey: 'title.userActivity',
    page: lazyPage(
      () => import('@/features/user/components/account-activity-page.tsx'),
      'AccountActivityPage',
    ),
  },
  updatePassword: {
    guard: { access: 'session', ownUserParam: 'userId' },
    titleKey: 'title.updatePassword',
    page: lazyPage(() => import('@/features/user/components/update-password-page.tsx'), 'UpdatePasswordPage'),
  },
  changeOrganization: {
    guard: { access: 'activated' },
    titleKey: 'title.changeOrganization',
    page: lazyPage(
      () => import('@/features/auth/components/change-organization-page.tsx'),
      'ChangeOrganizationPage',
    ),
  },
  login: {
    guard: { access: 'guest' },
    titleKey: 'title.login',
    page: lazyPage(() => import('@/features/auth/components/login-page.tsx'), 'LoginPage'),
  },
  activate: {
    guard: PUBLIC,
    titleKey: 'title.activate',
    page: lazyPage(() => import('@/features/auth/components/activate-page.tsx'), 'ActivatePage'),
  },
  forget: {
    guard: PUBLIC,
    titleKey: 'title.forget',
    page: lazyPage(() => import('@/features/auth/components/forget-page.tsx'), 'ForgetPage'),
  },
  previewGuest: {
    guard: PUBLIC,
    titleKey: 'title.previewGuest',
    page: lazyPage(() => import('@/features/preview/components/preview-guest-page.tsx'), 'PreviewGuestPage'),
  },
  docs: {
    guard: PUBLIC,
    titleKey: 'title.docs',
    page: lazyPage(() => import('@/features/docs/components/docs-page.tsx'), 'DocsPage'),
  },
  apiReference: {
    guard: PUBLIC,
    titleKey: 'title.apiReference',
    page: lazyPage(() => import('@/features/docs/components/api-reference-page.tsx'), 'ApiReferencePage'),
  },
  status: {
    guard: PUBLIC,
    titleKey: 'title.status',
    page: lazyPage(() => import('@/features/status/components/status-page.tsx'), 'StatusPage'),
  },
  unsupported: {
    guard: PUBLIC,
    titleKey: 'title.unsupported',
    page: lazyPage(() => import('@/features/errors/components/unsupported-page.tsx'), 'UnsupportedPage'),
  },
  notFound: { guard: PUBLIC, titleKey: 'title.notFound', page: notFound },
  catchAll: { guard: PUBLIC, titleKey: 'title.notFound', page: notFound },
} as const satisfies Record<RouteID, ConsoleRoute>;

type RouteTable = { [ID in RouteID]: (typeof routeSettings)[ID] & { pattern: (typeof routePatterns)[ID] } };

/** Every route of the console, in one place: its pattern, guard, title and page. */
export const routes = Object.fromEntries(
  Object.entries(routeSettings).map(([id, route]) => [
    id,
    { ...route, pattern: routePatterns[id as RouteID] },
  ]),
) as RouteTable;
