import { describe, expect, it } from 'vitest';
import { Permission, type User } from '@ukiyo/contract';
import type { Session } from '@/lib/session.ts';
import { member, organization } from '@/testing/fixtures.ts';
import { decideRoute, homePath } from './guard.ts';
import { paths } from './paths.ts';
import { routes } from './routes.ts';

const ALL = 127 & ~Permission.admin;

const loggedOut: Session = { user: null, organization: null };
const image = (permission: number, extra: Partial<User> = {}): Session => ({
  user: member(permission, extra),
  organization: organization(false),
});
const live = (permission: number): Session => ({
  user: member(permission),
  organization: organization(true),
});
const redirect = (to: string, flash?: string) =>
  flash ? { kind: 'redirect', to, flash } : { kind: 'redirect', to };
const allow = { kind: 'allow' };

describe('homePath: where / leads', () => {
  it.each([
    ['an administrator, even in a live organization', live(Permission.admin), paths.originIndex()],
    [
      'origin permission in an image organization',
      image(Permission.origin | Permission.statistics),
      paths.originIndex(),
    ],
    [
      'statistics before channel in a live organization',
      live(Permission.origin | Permission.statistics | Permission.channel),
      paths.statistics(),
    ],
    [
      'statistics in an image organization',
      image(Permission.statistics | Permission.member),
      paths.statistics(),
    ],
    ['channel in a live organization', live(Permission.channel | Permission.member), paths.channel()],
    [
      'channel does not count in an image organization',
      image(Permission.channel | Permission.member),
      paths.memberIndex(),
    ],
    ['member management', live(Permission.member), paths.memberIndex()],
    ['nothing else, live', live(Permission.cache), paths.userUpdate()],
    ['nothing else, image', image(Permission.cache), paths.preview()],
  ])('%s', (_, session, expected) => {
    expect(homePath(session)).toBe(expected);
    expect(decideRoute(routes.home.guard, session)).toEqual(redirect(expected));
  });
});

describe('decideRoute', () => {
  it('lets anyone open public routes', () => {
    for (const route of [
      routes.docs,
      routes.previewGuest,
      routes.activate,
      routes.forget,
      routes.unsupported,
      routes.notFound,
      routes.catchAll,
    ]) {
      expect(decideRoute(route.guard, loggedOut)).toEqual(allow);
      expect(decideRoute(route.guard, image(0, { activatedAt: null }))).toEqual(allow);
    }
  });

  it('sends the logged-in away from the login page', () => {
    expect(decideRoute(routes.login.guard, loggedOut)).toEqual(allow);
    expect(decideRoute(routes.login.guard, image(ALL))).toEqual(redirect(paths.home()));
  });

  it('sends the logged-out to the login page', () => {
    for (const route of [
      routes.home,
      routes.originIndex,
      routes.userUpdate,
      routes.adminInvoices,
      routes.tokenIndex,
      routes.changeOrganization,
    ]) {
      expect(decideRoute(route.guard, loggedOut)).toEqual(redirect(paths.login()));
    }
    expect(decideRoute(routes.updatePassword.guard, loggedOut, { userId: '7' })).toEqual(
      redirect(paths.login()),
    );
  });

  it('sends a user not activated to set a password', () => {
    const session = image(ALL, { activatedAt: null });
    for (const route of [
      routes.home,
      routes.originIndex,
      routes.userUpdate,
      routes.changeOrganization,
      routes.help,
    ]) {
      expect(decideRoute(route.guard, session)).toEqual(redirect(paths.updatePassword(7)));
    }
  });

  it('opens the password page only to its own user or an activated administrator', () => {
    const guard = routes.updatePassword.guard;
    expect(decideRoute(guard, image(0, { activatedAt: null }), { userId: '7' })).toEqual(allow);
    expect(decideRoute(guard, image(ALL), { userId: '7' })).toEqual(allow);
    expect(decideRoute(guard, image(ALL), { userId: '8' })).toEqual(redirect(paths.notFound()));
    expect(decideRoute(guard, image(Permission.admin), { userId: '8' })).toEqual(allow);
    expect(decideRoute(guard, image(Permission.admin, { activatedAt: null }), { userId: '8' })).toEqual(
      redirect(paths.notFound()),
    );
  });

  it('sends a user without a current organization to choose one', () => {
    const session: Session = { user: member(ALL), organization: null };
    for (const route of [routes.home, routes.originIndex, routes.tokenIndex, routes.help, routes.cache]) {
      expect(decideRoute(route.guard, session)).toEqual(redirect(paths.changeOrganization()));
    }
    expect(decideRoute(routes.changeOrganization.guard, session)).toEqual(allow);
    expect(decideRoute(routes.userUpdate.guard, session)).toEqual(allow);
  });

  it('shows administrator pages only to administrators, as not found to others', () => {
    for (const route of [routes.adminStatistics, routes.adminInvoices, routes.userCreate]) {
      expect(decideRoute(route.guard, image(ALL))).toEqual(redirect(paths.notFound()));
      expect(decideRoute(route.guard, image(Permission.admin))).toEqual(allow);
      expect(decideRoute(route.guard, { user: member(Permission.admin), organization: null })).toEqual(allow);
    }
  });

  it('refuses a missing permission as not found, with a message', () => {
    const cases = [
      [routes.originIndex, Permission.origin],
      [routes.originUpdate, Permission.origin],
      [routes.cache, Permission.cache],
      [routes.statistics, Permission.statistics],
      [routes.memberNew, Permission.member],
      [routes.organizationUpdate, Permission.organization],
      [routes.plan, Permission.organization],
    ] as const;
    for (const [route, bit] of cases) {
      expect(decideRoute(route.guard, image(ALL & ~bit))).toEqual(
        redirect(paths.notFound(), 'limit.notEnoughPermission'),
      );
      expect(decideRoute(route.guard, image(bit))).toEqual(allow);
    }
    expect(decideRoute(routes.channel.guard, live(ALL & ~Permission.channel))).toEqual(
      redirect(paths.notFound(), 'limit.notEnoughPermission'),
    );
  });

  it('keeps image pages from live organizations and live pages from image organizations', () => {
    for (const route of [routes.originIndex, routes.originCreate, routes.preview, routes.plan]) {
      expect(decideRoute(route.guard, live(ALL))).toEqual(redirect(paths.home(), 'limit.imageNotAvailable'));
    }
    for (const route of [routes.channel, routes.liveStreaming]) {
      expect(decideRoute(route.guard, image(ALL))).toEqual(
        redirect(paths.home(), 'limit.liveStreamingNotAvailable'),
      );
      expect(decideRoute(route.guard, live(ALL))).toEqual(allow);
    }
  });

  it('lets administrators through permission and organization-kind checks', () => {
    expect(decideRoute(routes.originIndex.guard, live(Permission.admin))).toEqual(allow);
    expect(decideRoute(routes.channel.guard, image(Permission.admin))).toEqual(allow);
    expect(decideRoute(routes.organizationUpdate.guard, image(Permission.admin))).toEqual(allow);
  });

  it('opens organization-wide pages to any member of the organization', () => {
    for (const route of [routes.tokenIndex, routes.tokenNew, routes.help]) {
      expect(decideRoute(route.guard, image(0))).toEqual(allow);
      expect(decideRoute(route.guard, live(0))).toEqual(allow);
    }
  });
});

describe('paths', () => {
  it('builds the URLs of the spec', () => {
    expect(paths.updatePassword(12)).toBe('/user/12/updatePassword');
    expect(paths.originCopy(4)).toBe('/origin/copy/4');
    expect(paths.activate('a b')).toBe('/activate/a%20b');
    expect(paths.docs()).toBe('/docs/');
    expect(paths.docs('image/signed-url')).toBe('/docs/image/signed-url');
    expect(paths.memberIndex()).toBe('/member/');
    expect(paths.home()).toBe('/');
  });
});
