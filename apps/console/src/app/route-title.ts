import { useMatches } from 'react-router';
import { useTranslation } from 'react-i18next';
import { useSession } from '@/lib/session.ts';
import { isRouteID, type RouteID } from './paths.ts';

/**
 * The titles of a route, carried on its router entry (`handle`) so pages can read them without
 * importing the route table, which imports the pages.
 */
export interface RouteTitle {
  titleKey: string;
  /** The title in a live organization, where the same page reads differently. */
  liveTitleKey?: string;
}

const NOT_FOUND_TITLE: RouteTitle = { titleKey: 'title.notFound' };

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
  const route = (useMatches().at(-1)?.handle as RouteTitle | undefined) ?? NOT_FOUND_TITLE;
  const key = organization?.isLive && route.liveTitleKey ? route.liveTitleKey : route.titleKey;
  return t(key);
}
