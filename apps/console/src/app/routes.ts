import { generatePath, type LazyRouteFunction, type RouteObject } from 'react-router';
import { Permission, type Access, type OrganizationKind } from '@ukiyo/contract';

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

export interface ConsoleRoute {
  pattern: string;
  guard: RouteGuard;
  titleKey: string;
  /** The title in a live organization, where the same page reads differently. */
  liveTitleKey?: string;
  page?: PageModule;
}

const login: PageModule = () =>
  import('../features/auth/components/login-page.tsx').then((m) => ({ Component: m.LoginPage }));
const changeOrganization: PageModule = () =>
  import('../features/auth/components/change-organization-page.tsx').then((m) => ({
    Component: m.ChangeOrganizationPage,
  }));
const updatePassword: PageModule = () =>
  import('../features/user/components/update-password-page.tsx').then((m) => ({
    Component: m.UpdatePasswordPage,
  }));
const memberIndex: PageModule = () =>
  import('../features/member/components/member-index-page.tsx').then((m) => ({
    Component: m.MemberIndexPage,
  }));
const memberNew: PageModule = () =>
  import('../features/member/components/member-new-page.tsx').then((m) => ({ Component: m.MemberNewPage }));
const memberUpdate: PageModule = () =>
  import('../features/member/components/member-update-page.tsx').then((m) => ({
    Component: m.MemberUpdatePage,
  }));
const tokenIndex: PageModule = () =>
  import('../features/token/components/token-index-page.tsx').then((m) => ({ Component: m.TokenIndexPage }));
const tokenNew: PageModule = () =>
  import('../features/token/components/token-new-page.tsx').then((m) => ({ Component: m.TokenNewPage }));
const plan: PageModule = () =>
  import('../features/plan/components/plan-page.tsx').then((m) => ({ Component: m.PlanPage }));
const organizationUpdate: PageModule = () =>
  import('../features/organization/components/organization-update-page.tsx').then((m) => ({
    Component: m.OrganizationUpdatePage,
  }));
const userUpdate: PageModule = () =>
  import('../features/user/components/user-update-page.tsx').then((m) => ({ Component: m.UserUpdatePage }));
const userActivity: PageModule = () =>
  import('../features/user/components/account-activity-page.tsx').then((m) => ({
    Component: m.AccountActivityPage,
  }));
const userCreate: PageModule = () =>
  import('../features/admin/components/user-create-page.tsx').then((m) => ({ Component: m.UserCreatePage }));
const adminOutbox: PageModule = () =>
  import('../features/admin/components/outbox-page.tsx').then((m) => ({ Component: m.OutboxPage }));
const adminJobs: PageModule = () =>
  import('../features/admin/components/dead-letters-page.tsx').then((m) => ({
    Component: m.DeadLettersPage,
  }));
const activate: PageModule = () =>
  import('../features/auth/components/activate-page.tsx').then((m) => ({ Component: m.ActivatePage }));
const forget: PageModule = () =>
  import('../features/auth/components/forget-page.tsx').then((m) => ({ Component: m.ForgetPage }));
const help: PageModule = () =>
  import('../features/help/components/help-page.tsx').then((m) => ({ Component: m.HelpPage }));
const docs: PageModule = () =>
  import('../features/docs/components/docs-page.tsx').then((m) => ({ Component: m.DocsPage }));
const status: PageModule = () =>
  import('../features/status/components/status-page.tsx').then((m) => ({ Component: m.StatusPage }));
const dashboard: PageModule = () =>
  import('../features/usage/components/dashboard-page.tsx').then((m) => ({ Component: m.DashboardPage }));
const statistics: PageModule = () =>
  import('../features/usage/components/statistics-page.tsx').then((m) => ({ Component: m.StatisticsPage }));
const adminStatistics: PageModule = () =>
  import('../features/usage/components/admin-statistics-page.tsx').then((m) => ({
    Component: m.AdminStatisticsPage,
  }));
const adminInvoices: PageModule = () =>
  import('../features/usage/components/admin-invoices-page.tsx').then((m) => ({
    Component: m.AdminInvoicesPage,
  }));
const originIndex: PageModule = () =>
  import('../features/origin/components/origin-index-page.tsx').then((m) => ({
    Component: m.OriginIndexPage,
  }));
const originCreate: PageModule = () =>
  import('../features/origin/components/origin-edit-pages.tsx').then((m) => ({
    Component: m.OriginCreatePage,
  }));
const originCopy: PageModule = () =>
  import('../features/origin/components/origin-edit-pages.tsx').then((m) => ({
    Component: m.OriginCopyPage,
  }));
const originUpdate: PageModule = () =>
  import('../features/origin/components/origin-edit-pages.tsx').then((m) => ({
    Component: m.OriginUpdatePage,
  }));
const originCert: PageModule = () =>
  import('../features/origin/components/origin-cert-page.tsx').then((m) => ({ Component: m.OriginCertPage }));
const originDestroy: PageModule = () =>
  import('../features/origin/components/origin-destroy-page.tsx').then((m) => ({
    Component: m.OriginDestroyPage,
  }));
const cache: PageModule = () =>
  import('../features/cache/components/cache-page.tsx').then((m) => ({ Component: m.CachePage }));
const preview: PageModule = () =>
  import('../features/preview/components/preview-page.tsx').then((m) => ({ Component: m.PreviewPage }));
const previewGuest: PageModule = () =>
  import('../features/preview/components/preview-guest-page.tsx').then((m) => ({
    Component: m.PreviewGuestPage,
  }));
const channel: PageModule = () =>
  import('../features/channel/components/channel-page.tsx').then((m) => ({ Component: m.ChannelPage }));
const liveStreaming: PageModule = () =>
  import('../features/channel/components/live-streaming-page.tsx').then((m) => ({
    Component: m.LiveStreamingPage,
  }));
const notFound: PageModule = () =>
  import('../features/errors/components/not-found-page.tsx').then((m) => ({ Component: m.NotFoundPage }));
const unsupported: PageModule = () =>
  import('../features/errors/components/unsupported-page.tsx').then((m) => ({
    Component: m.UnsupportedPage,
  }));

const PUBLIC: RouteGuard = { access: 'public' };
const ORGANIZATION: RouteGuard = { access: 'organization' };
const ADMIN: RouteGuard = { access: 'activated', adminOnly: true };
const ORIGINS: RouteGuard = {
  access: 'organization',
  permission: Permission.origin,
  organizationKind: 'image',
};
const MEMBERS: RouteGuard = { access: 'organization', permission: Permission.member };

/** Every route of the console (console-spec section 2), in one place. */
export const routes = {
  home: { pattern: '/', guard: { access: 'organization', home: true }, titleKey: 'title.home' },
  dashboard: { pattern: '/dashboard', guard: ORGANIZATION, titleKey: 'title.dashboard', page: dashboard },
  originIndex: { pattern: '/origin/index', guard: ORIGINS, titleKey: 'title.originIndex', page: originIndex },
  originCreate: {
    pattern: '/origin/create',
    guard: ORIGINS,
    titleKey: 'title.originCreate',
    page: originCreate,
  },
  originCopy: {
    pattern: '/origin/copy/:copyId',
    guard: ORIGINS,
    titleKey: 'title.originCopy',
    page: originCopy,
  },
  originUpdate: {
    pattern: '/origin/:id/update',
    guard: ORIGINS,
    titleKey: 'title.originUpdate',
    page: originUpdate,
  },
  originCert: { pattern: '/origin/:id/cert', guard: ORIGINS, titleKey: 'title.originCert', page: originCert },
  originDestroy: {
    pattern: '/origin/:id/destroy',
    guard: ORIGINS,
    titleKey: 'title.originDestroy',
    page: originDestroy,
  },
  cache: {
    pattern: '/cache',
    guard: { access: 'organization', permission: Permission.cache },
    titleKey: 'title.cache',
    page: cache,
  },
  liveStreaming: {
    pattern: '/livestreaming/',
    guard: { access: 'organization', permission: Permission.statistics, organizationKind: 'live' },
    titleKey: 'title.liveStreaming',
    page: liveStreaming,
  },
  channel: {
    pattern: '/channel/',
    guard: { access: 'organization', permission: Permission.channel, organizationKind: 'live' },
    titleKey: 'title.channel',
    page: channel,
  },
  statistics: {
    pattern: '/statistics',
    guard: { access: 'organization', permission: Permission.statistics },
    titleKey: 'title.statistics',
    liveTitleKey: 'title.hlsStatistics',
    page: statistics,
  },
  preview: {
    pattern: '/preview',
    guard: { access: 'organization', organizationKind: 'image' },
    titleKey: 'title.preview',
    page: preview,
  },
  plan: {
    pattern: '/plan/',
    guard: { access: 'organization', permission: Permission.organization, organizationKind: 'image' },
    titleKey: 'title.plan',
    page: plan,
  },
  memberIndex: { pattern: '/member/', guard: MEMBERS, titleKey: 'title.memberIndex', page: memberIndex },
  memberNew: { pattern: '/member/new', guard: MEMBERS, titleKey: 'title.memberNew', page: memberNew },
  memberUpdate: {
    pattern: '/member/:id/update',
    guard: MEMBERS,
    titleKey: 'title.memberUpdate',
    page: memberUpdate,
  },
  tokenIndex: { pattern: '/token/', guard: ORGANIZATION, titleKey: 'title.tokenIndex', page: tokenIndex },
  tokenNew: { pattern: '/token/new', guard: ORGANIZATION, titleKey: 'title.tokenNew', page: tokenNew },
  help: { pattern: '/help/', guard: ORGANIZATION, titleKey: 'title.help', page: help },
  organizationUpdate: {
    pattern: '/organization/update',
    guard: { access: 'organization', permission: Permission.organization },
    titleKey: 'title.organizationUpdate',
    page: organizationUpdate,
  },
  adminStatistics: {
    pattern: '/admin/statistics',
    guard: ADMIN,
    titleKey: 'title.adminStatistics',
    page: adminStatistics,
  },
  adminInvoices: {
    pattern: '/admin/invoices',
    guard: ADMIN,
    titleKey: 'title.adminInvoices',
    page: adminInvoices,
  },
  userCreate: { pattern: '/user/create', guard: ADMIN, titleKey: 'title.userCreate', page: userCreate },
  adminOutbox: { pattern: '/admin/outbox', guard: ADMIN, titleKey: 'title.adminOutbox', page: adminOutbox },
  adminJobs: { pattern: '/admin/jobs', guard: ADMIN, titleKey: 'title.adminJobs', page: adminJobs },
  userUpdate: {
    pattern: '/user/update',
    guard: { access: 'activated' },
    titleKey: 'title.userUpdate',
    page: userUpdate,
  },
  userActivity: {
    pattern: '/user/activity',
    guard: { access: 'activated' },
    titleKey: 'title.userActivity',
    page: userActivity,
  },
  updatePassword: {
    pattern: '/user/:userId/updatePassword',
    guard: { access: 'session', ownUserParam: 'userId' },
    titleKey: 'title.updatePassword',
    page: updatePassword,
  },
  changeOrganization: {
    pattern: '/auth/changeOrganization',
    guard: { access: 'activated' },
    titleKey: 'title.changeOrganization',
    page: changeOrganization,
  },
  login: { pattern: '/auth/login', guard: { access: 'guest' }, titleKey: 'title.login', page: login },
  activate: { pattern: '/activate/:token', guard: PUBLIC, titleKey: 'title.activate', page: activate },
  forget: { pattern: '/forget/', guard: PUBLIC, titleKey: 'title.forget', page: forget },
  previewGuest: {
    pattern: '/preview-guest',
    guard: PUBLIC,
    titleKey: 'title.previewGuest',
    page: previewGuest,
  },
  docs: { pattern: '/docs/*', guard: PUBLIC, titleKey: 'title.docs', page: docs },
  status: { pattern: '/status', guard: PUBLIC, titleKey: 'title.status', page: status },
  unsupported: { pattern: '/unsupported', guard: PUBLIC, titleKey: 'title.unsupported', page: unsupported },
  notFound: { pattern: '/404', guard: PUBLIC, titleKey: 'title.notFound', page: notFound },
  catchAll: { pattern: '*', guard: PUBLIC, titleKey: 'title.notFound', page: notFound },
} as const satisfies Record<string, ConsoleRoute>;

export type RouteID = keyof typeof routes;

export function isRouteID(id: string | undefined): id is RouteID {
  return id !== undefined && Object.hasOwn(routes, id);
}

type ID = string | number;
function path(id: RouteID, params?: Record<string, ID>): string {
  const { pattern } = routes[id];
  const built = generatePath(
    pattern,
    params && Object.fromEntries(Object.entries(params).map(([k, v]) => [k, String(v)])),
  );
  // generatePath drops trailing slashes; the spec's URLs keep theirs ('/member/', '/docs/').
  return (pattern.endsWith('/') || pattern.endsWith('/*')) && !built.endsWith('/') && !params?.['*']
    ? `${built}/`
    : built;
}

function withQuery(base: string, query: Record<string, ID | undefined>): string {
  const entries = Object.entries(query).filter((entry): entry is [string, ID] => entry[1] !== undefined);
  if (entries.length === 0) return base;
  return `${base}?${new URLSearchParams(entries.map(([k, v]) => [k, String(v)])).toString()}`;
}

/** URL builders: the only way the console writes its own URLs. */
export const paths = {
  home: () => path('home'),
  dashboard: () => path('dashboard'),
  originIndex: () => path('originIndex'),
  originCreate: () => path('originCreate'),
  originCopy: (copyId: ID) => path('originCopy', { copyId }),
  originUpdate: (id: ID) => path('originUpdate', { id }),
  originCert: (id: ID) => path('originCert', { id }),
  originDestroy: (id: ID) => path('originDestroy', { id }),
  cache: () => path('cache'),
  liveStreaming: () => path('liveStreaming'),
  channel: () => path('channel'),
  statistics: () => path('statistics'),
  preview: () => path('preview'),
  plan: () => path('plan'),
  memberIndex: () => path('memberIndex'),
  memberNew: () => path('memberNew'),
  memberUpdate: (id: ID) => path('memberUpdate', { id }),
  tokenIndex: () => path('tokenIndex'),
  tokenNew: () => path('tokenNew'),
  help: () => path('help'),
  organizationUpdate: () => path('organizationUpdate'),
  adminStatistics: () => path('adminStatistics'),
  adminInvoices: () => path('adminInvoices'),
  /** `organization`: open that organization's edit form instead of the create form. */
  userCreate: (query: { organization?: ID } = {}) => withQuery(path('userCreate'), query),
  adminOutbox: () => path('adminOutbox'),
  adminJobs: () => path('adminJobs'),
  userUpdate: () => path('userUpdate'),
  userActivity: () => path('userActivity'),
  updatePassword: (userId: ID) => path('updatePassword', { userId }),
  changeOrganization: () => path('changeOrganization'),
  login: () => path('login'),
  activate: (token: string) => path('activate', { token }),
  /** `token`: the link of a password reset mail, which opens the new-password form. */
  forget: (query: { token?: string } = {}) => withQuery(path('forget'), query),
  previewGuest: () => path('previewGuest'),
  /** `page`: a document below /docs/, e.g. 'image/signed-url'; empty for the index. */
  docs: (page = '') => path('docs', { '*': page }),
  status: () => path('status'),
  unsupported: () => path('unsupported'),
  notFound: () => path('notFound'),
};
