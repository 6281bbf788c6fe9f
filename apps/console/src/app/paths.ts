import { generatePath } from 'react-router';

/**
 * Every URL pattern of the console (console-spec section 2), by route id. A module of its own,
 * apart from the route table (`routes.ts`): the table loads the pages, and the pages build their
 * links from here, so no page imports the table that imports it.
 */
export const routePatterns = {
  home: '/',
  dashboard: '/dashboard',
  originIndex: '/origin/index',
  originCreate: '/origin/create',
  originCopy: '/origin/copy/:copyId',
  originUpdate: '/origin/:id/update',
  originCert: '/origin/:id/cert',
  originDestroy: '/origin/:id/destroy',
  cache: '/cache',
  liveStreaming: '/livestreaming/',
  channel: '/channel/',
  statistics: '/statistics',
  preview: '/preview',
  plan: '/plan/',
  memberIndex: '/member/',
  memberNew: '/member/new',
  memberUpdate: '/member/:id/update',
  tokenIndex: '/token/',
  tokenNew: '/token/new',
  help: '/help/',
  organizationUpdate: '/organization/update',
  adminStatistics: '/admin/statistics',
  adminInvoices: '/admin/invoices',
  userCreate: '/user/create',
  adminOutbox: '/admin/outbox',
  adminJobs: '/admin/jobs',
  userUpdate: '/user/update',
  userActivity: '/user/activity',
  updatePassword: '/user/:userId/updatePassword',
  changeOrganization: '/auth/changeOrganization',
  login: '/auth/login',
  activate: '/activate/:token',
  forget: '/forget/',
  previewGuest: '/preview-guest',
  docs: '/docs/*',
  apiReference: '/api-reference/',
  status: '/status',
  unsupported: '/unsupported',
  notFound: '/404',
  catchAll: '*',
} as const;

export type RouteID = keyof typeof routePatterns;

export function isRouteID(id: string | undefined): id is RouteID {
  return id !== undefined && Object.hasOwn(routePatterns, id);
}

type ID = string | number;
function path(id: RouteID, params?: Record<string, ID>): string {
  const pattern = routePatterns[id];
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
  apiReference: () => path('apiReference'),
  status: () => path('status'),
  unsupported: () => path('unsupported'),
  notFound: () => path('notFound'),
};
