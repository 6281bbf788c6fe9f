import { useMatches } from 'react-router';
import { useTranslation } from 'react-i18next';
import { useSession } from '../lib/session.ts';
import { isRouteID, routes, type RouteID } from './routes.ts';

/** The route being shown, as an ID of the route table (the not-found page when none matched). */
export function useCurrentRouteID(): RouteID {
  const matches = useMatches();
  const id = matches.at(-1)?.id;
  return isRouteID(id) ? id : 'notFound';
}

/** The translated title of the current page; live organizations read some pages differently. */
export function useRouteTitle(): string {
  const { t } = useTranslation();
  const { organization } = useSession();
  const route: { titleKey: string; liveTitleKey?: string } = routes[useCurrentRouteID()];
  const key = organization?.isLive && route.liveTitleKey ? route.liveTitleKey : route.titleKey;
  return t(key);
}
