import { isAdministrator } from '@ukiyo/contract';
import { isActivated, isLoggedIn, type Session } from '@/lib/session.ts';
import { decideRoute } from './guard.ts';
import { paths, type RouteID } from './paths.ts';
import { routes } from './routes.ts';

/** A link inside the console; `activeFor` lists the routes under which it is highlighted. */
export interface MenuLink {
  kind: 'link';
  id: string;
  labelKey: string;
  to: string;
  activeFor: readonly RouteID[];
}
export interface MenuExternal {
  kind: 'external';
  id: string;
  labelKey: string;
  href: string;
}
export interface MenuGroup {
  kind: 'group';
  id: string;
  labelKey: string;
  children: readonly MenuLink[];
}
export type MenuEntry = MenuLink | MenuExternal | MenuGroup;

export interface Navigation {
  main: MenuEntry[];
  right: MenuEntry[];
  /** The user dropdown; null when logged out. */
  account: { memberCode: string; serviceCode: string; emailAddress: string; items: MenuLink[] } | null;
}

const ORIGIN_ROUTES: RouteID[] = [
  'originIndex',
  'originCreate',
  'originCopy',
  'originUpdate',
  'originCert',
  'originDestroy',
];

const link = (id: RouteID, labelKey: string, to: string, activeFor: readonly RouteID[] = [id]): MenuLink => ({
  kind: 'link',
  id,
  labelKey,
  to,
  activeFor,
});

/** An entry shows only when its route's guard would let the user in (administrators pass). */
function visible(session: Session) {
  return (entry: MenuLink) => decideRoute(routes[entry.id as RouteID].guard, session).kind === 'allow';
}

function mainMenu(session: Session): MenuEntry[] {
  const { user, organization } = session;
  if (!isLoggedIn(user) || !isActivated(user) || organization === null) return [];
  const allowed = visible(session);
  if (isAdministrator(user.permission)) {
    return [
      link('originIndex', 'nav.origins', paths.originIndex(), ORIGIN_ROUTES),
      link('adminStatistics', 'nav.adminStatistics', paths.adminStatistics()),
      {
        kind: 'group',
        id: 'liveStreamingGroup',
        labelKey: 'nav.liveStreamingGroup',
        children: [
          link('liveStreaming', 'nav.liveStreaming', paths.liveStreaming()),
          link('channel', 'nav.channel', paths.channel()),
        ],
      },
      link('adminInvoices', 'nav.adminInvoices', paths.adminInvoices()),
      link('preview', 'nav.preview', paths.preview()),
      link('cache', 'nav.cache', paths.cache()),
    ];
  }
  // The dashboard (this month's usage, any member) leads both menus, before the spec's items.
  const items = organization.isLive
    ? [
        link('dashboard', 'nav.dashboard', paths.dashboard()),
        link('channel', 'nav.channel', paths.channel()),
        link('liveStreaming', 'nav.liveStreaming', paths.liveStreaming()),
        link('statistics', 'nav.hlsStatistics', paths.statistics()),
        link('cache', 'nav.cache', paths.cache()),
      ]
    : [
        link('dashboard', 'nav.dashboard', paths.dashboard()),
        link('originIndex', 'nav.origins', paths.originIndex(), ORIGIN_ROUTES),
        link('statistics', 'nav.statistics', paths.statistics()),
        link('preview', 'nav.preview', paths.preview()),
        link('cache', 'nav.cache', paths.cache()),
      ];
  return items.filter(allowed);
}

/**
 * The top navigation for a session (console-spec section 2, "Top navigation"). Pure: the
 * navbar renders it and the tests read it.
 */
export function buildNavigation(
  session: Session,
  serviceSiteUrl: string,
  statusUrl: string | null = null,
): Navigation {
  const { user, organization } = session;
  // With an external status page (STATUS_URL) the link leaves the console.
  const status: MenuEntry = statusUrl
    ? { kind: 'external', id: 'status', labelKey: 'nav.status', href: statusUrl }
    : link('status', 'nav.status', paths.status());
  if (!isLoggedIn(user)) {
    return {
      main: [
        link('previewGuest', 'nav.previewGuest', paths.previewGuest()),
        link('docs', 'nav.docs', paths.docs()),
        { kind: 'external', id: 'serviceSite', labelKey: 'nav.serviceSite', href: serviceSiteUrl },
      ],
      // The documentation is already in the menu on the left for visitors.
      right: [status],
      account: null,
    };
  }
  const allowed = visible(session);
  return {
    main: mainMenu(session),
    right: [
      status,
      ...[link('docs', 'nav.docs', paths.docs()), link('help', 'nav.help', paths.help())].filter(allowed),
    ],
    account: {
      memberCode: organization?.sakuraAccount.sakuraMemberCode ?? user.sakuraAccount?.sakuraMemberCode ?? '',
      serviceCode: organization?.serviceCode ?? '',
      emailAddress: user.emailAddress,
      items: [
        link('changeOrganization', 'nav.changeOrganization', paths.changeOrganization()),
        link('userUpdate', 'nav.userUpdate', paths.userUpdate()),
        link('memberIndex', 'nav.members', paths.memberIndex(), ['memberIndex', 'memberNew', 'memberUpdate']),
        link('tokenIndex', 'nav.tokens', paths.tokenIndex(), ['tokenIndex', 'tokenNew']),
        link('organizationUpdate', 'nav.organizationUpdate', paths.organizationUpdate(), [
          'organizationUpdate',
          'plan',
        ]),
        // Administrator pages outside the spec's menus: organizations are created there, and the
        // outbox is where activation mails wait when no SMTP server is configured, and failed jobs
        // are the webhooks, uploads and mails that exhausted their retries.
        link('userCreate', 'nav.userCreate', paths.userCreate()),
        link('adminOutbox', 'nav.adminOutbox', paths.adminOutbox()),
        link('adminJobs', 'nav.adminJobs', paths.adminJobs()),
      ].filter(allowed),
    },
  };
}
