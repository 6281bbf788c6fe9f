import { hasPermission, isAdministrator, Permission, type MessageKey } from '@ukiyo/contract';
import { isActivated, isLoggedIn, type Session } from '@/lib/session.ts';
import { paths } from './paths.ts';
import type { RouteGuard } from './routes.ts';

export type GuardDecision = { kind: 'allow' } | { kind: 'redirect'; to: string; flash?: MessageKey };

const allow: GuardDecision = { kind: 'allow' };
const redirectTo = (to: string, flash?: MessageKey): GuardDecision =>
  flash ? { kind: 'redirect', to, flash } : { kind: 'redirect', to };

/** Where '/' leads, by the first rule the user meets (console-spec section 2). */
export function homePath({ user, organization }: Session): string {
  const mask = user?.permission ?? 0;
  const isLive = organization?.isLive ?? false;
  if (isAdministrator(mask) || (!isLive && hasPermission(mask, Permission.origin)))
    return paths.originIndex();
  if (hasPermission(mask, Permission.statistics)) return paths.statistics();
  if (isLive && hasPermission(mask, Permission.channel)) return paths.channel();
  if (hasPermission(mask, Permission.member)) return paths.memberIndex();
  return isLive ? paths.userUpdate() : paths.preview();
}

/**
 * Whether the session may open a route, or where it goes instead. Pure, so the root loader
 * and the tests ask the same question. The order matters: identity first (who are you), then
 * account state (activated, organization chosen), then what the account may do.
 */
export function decideRoute(
  guard: RouteGuard,
  session: Session,
  params: Readonly<Record<string, string | undefined>> = {},
): GuardDecision {
  const { user, organization } = session;
  if (guard.access === 'public') return allow;
  if (guard.access === 'guest') return isLoggedIn(user) ? redirectTo(paths.home()) : allow;
  if (!isLoggedIn(user)) return redirectTo(paths.login());

  const admin = isAdministrator(user.permission);
  const activated = isActivated(user);
  if (guard.ownUserParam !== undefined) {
    const own = params[guard.ownUserParam] === String(user.userID);
    if (!own && !(admin && activated)) return redirectTo(paths.notFound());
  }
  if (guard.access !== 'session' && !activated) return redirectTo(paths.updatePassword(user.userID));
  if (guard.adminOnly && !admin) return redirectTo(paths.notFound());
  if (guard.access === 'organization' && organization === null) return redirectTo(paths.changeOrganization());
  if (guard.home) return redirectTo(homePath(session));

  // Administrators pass every check (console-spec section 6), the organization kind included.
  if (!admin && organization !== null) {
    if (guard.organizationKind === 'image' && organization.isLive) {
      return redirectTo(paths.home(), 'limit.imageNotAvailable');
    }
    if (guard.organizationKind === 'live' && !organization.isLive) {
      return redirectTo(paths.home(), 'limit.liveStreamingNotAvailable');
    }
  }
  if (guard.permission !== undefined && !hasPermission(user.permission, guard.permission)) {
    return redirectTo(paths.notFound(), 'limit.notEnoughPermission');
  }
  return allow;
}
