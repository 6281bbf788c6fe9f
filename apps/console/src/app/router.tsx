import {
  createBrowserRouter,
  matchRoutes,
  redirect,
  redirectDocument,
  replace,
  type LoaderFunctionArgs,
  type Location,
  type RouteObject,
} from 'react-router';
import { callApi } from '@/lib/api-client.ts';
import { flash } from '@/lib/flash.ts';
import { textsReady } from '@/lib/i18n.ts';
import { queryClient } from '@/lib/query-client.ts';
import { getSession, isLoggedIn, setSession, type Session } from '@/lib/session.ts';
import { decideRoute } from './guard.ts';
import { RootError } from './root-error.tsx';
import type { RouteTitle } from './route-title.ts';
import { LoadingScreen, RootLayout } from './root-layout.tsx';
import { isRouteID } from './paths.ts';
import { routes } from './routes.ts';
import { deployedVersionChanged } from './version-check.ts';

type Router = ReturnType<typeof createBrowserRouter>;

/** What the loader needs to know about the router it runs in. */
interface RouterState {
  /** The location shown now; null during the first load. */
  committed(): Location | null;
  /** Where the running navigation goes (with its #hash, which requests lack). */
  target(): Location | null;
}

const href = (location: Pick<Location, 'pathname' | 'search' | 'hash'>) =>
  location.pathname + location.search + location.hash;

function updateSession(next: Session): void {
  const before = getSession();
  // Another user or organization: nothing cached for the previous one may show.
  if (
    before.user?.userID !== next.user?.userID ||
    before.organization?.organizationID !== next.organization?.organizationID
  ) {
    queryClient.clear();
  }
  setSession(next);
}

async function whoami(signal: AbortSignal): Promise<Session | null> {
  try {
    return await callApi('user.whoami', {}, { signal });
  } catch (error) {
    if (signal.aborted) throw error;
    return null;
  }
}

/**
 * Messages set while a navigation runs (its guards, a failed session check) are for the page it
 * ends on, which may be several redirects later: the flash turns over when a location is shown.
 */
function advanceFlashOnCommit(router: Router): void {
  let shown: Location | null = null;
  router.subscribe((state) => {
    if (!state.initialized || state.navigation.state !== 'idle' || state.location === shown) return;
    shown = state.location;
    flash.advance();
  });
}

/**
 * Runs before every navigation (`shouldRevalidate` always true): restores the session, checks
 * for a new deployment, and applies the target route's guard. Guards live here, not in child
 * loaders, because child loaders run in parallel with this one and would see a stale session.
 */
function createRootLoader(state: RouterState) {
  return async function rootLoader({ request }: LoaderFunctionArgs) {
    const url = new URL(request.url);
    const committed = state.committed();
    // The page's texts load beside its chunk and the session check (lib/i18n.ts); a catalogue
    // that cannot load fails the navigation into RootError, whose texts the entry holds.
    const [changed, session] = await Promise.all([
      deployedVersionChanged(),
      whoami(request.signal),
      textsReady(),
    ]);
    if (changed) throw redirectDocument(href(state.target() ?? url));

    if (session) {
      // The console had a user and the server no longer does: the session ended there (the
      // member was disabled, it expired or was ended elsewhere). Console-spec section 8's
      // message says so on the login page the guard sends them to, not a silent logout.
      if (isLoggedIn(getSession().user) && !isLoggedIn(session.user)) {
        flash.next({ variant: 'danger', key: 'error.sessionInvalid' });
      }
      updateSession(session);
    } else if (committed && committed.pathname + committed.search !== url.pathname + url.search) {
      // Without a session answer the navigation cannot be judged: stay where the user is.
      flash.next({ variant: 'danger', key: 'error.internal' });
      throw replace(href(committed));
    } else {
      flash.next({ variant: 'danger', key: 'error.internal' });
      // The first load has no earlier session to keep: logged out (console-spec section 4).
      if (!committed) updateSession({ user: null, organization: null });
    }

    const leaf = matchRoutes(matchTree, url.pathname)?.at(-1);
    const id = leaf?.route.id;
    if (!leaf || !isRouteID(id)) return null;
    const decision = decideRoute(routes[id].guard, getSession(), leaf.params);
    if (decision.kind === 'redirect') {
      if (decision.flash) flash.next(decision.flash);
      throw redirect(decision.to);
    }
    return null;
  };
}

const pages: RouteObject[] = Object.entries(routes).map(([id, route]): RouteObject => {
  const { titleKey, liveTitleKey }: RouteTitle = route;
  const handle: RouteTitle = { titleKey, liveTitleKey };
  // '/' always redirects in the loader; the component only keeps the first render busy.
  if (id === 'home') return { id, index: true, handle, Component: LoadingScreen };
  return 'page' in route
    ? { id, path: route.pattern, handle, lazy: route.page }
    : { id, path: route.pattern, handle };
});

/** The same paths and IDs as the router's, for finding which route a request is for. */
const matchTree: RouteObject[] = [{ path: '/', children: pages }];

function createRouteTree(state: RouterState): RouteObject[] {
  return [
    {
      id: 'root',
      path: '/',
      loader: createRootLoader(state),
      shouldRevalidate: () => true,
      Component: RootLayout,
      HydrateFallback: LoadingScreen,
      ErrorBoundary: RootError,
      children: pages,
    },
  ];
}

/** The console's router; tests pass createMemoryRouter. */
export function createConsoleRouter(
  create: (tree: RouteObject[]) => Router = (tree) => createBrowserRouter(tree),
): Router {
  let router: Router | null = null;
  router = create(
    createRouteTree({
      committed: () => (router?.state.initialized ? router.state.location : null),
      target: () => router?.state.navigation.location ?? null,
    }),
  );
  advanceFlashOnCommit(router);
  return router;
}
