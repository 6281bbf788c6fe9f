import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { expect, test, type Page } from '@playwright/test';
import { DOCS_PAGES, docsPagePath } from '../../apps/console/src/features/docs/components/docs-tree.ts';
import { ADMIN, DEMO_OWNER, LIVE_USER, STATS_USER } from '../support/fixtures.ts';
import { api, UI_API } from './edge.ts';
import { ARTIFACTS } from './helpers.ts';

/**
 * Every route of the console's route table, for every role the seed provides, on a phone and
 * on a desktop: the page must never scroll sideways. A new route is visited as soon as it is
 * in the table; one with parameters fails here until `PARAMETERS` says which ids it takes.
 */

// The console's route table and guard, loaded at run time: a static import would have e2e's
// typecheck compile the console's pages, which need the console's compiler settings (JSX, Vite).
const ROUTE_TABLE = '../../apps/console/src/app/routes.ts';
const GUARD = '../../apps/console/src/app/guard.ts';
const { routes } = (await import(ROUTE_TABLE)) as {
  routes: Record<string, { pattern: string; guard: object }>;
};
const { decideRoute } = (await import(GUARD)) as {
  decideRoute: (guard: object, session: Session, params: Record<string, string>) => { kind: string };
};
type Session = { user: { userID: number } | null; organization: object | null };

const VIEWPORTS = {
  '390x844': { width: 390, height: 844 },
  '1280x800': { width: 1280, height: 800 },
} as const;

/**
 * The administrator, who opens the most pages, reads them in English (the longer words); the
 * others in Japanese, the default, so both languages pass through nearly every page.
 */
const ROLES = {
  guest: { account: null, language: 'ja' },
  admin: { account: ADMIN, language: 'en' },
  owner: { account: DEMO_OWNER, language: 'ja' },
  statistics: { account: STATS_USER, language: 'ja' },
  live: { account: LIVE_USER, language: 'ja' },
} as const;

/** Ids the parameterised routes get: real records of the seed, or of the logged-in user. */
interface Ids {
  originId: number;
  userId: number;
}
const PARAMETERS: Record<string, (ids: Ids) => Record<string, string | number>> = {
  originCopy: ({ originId }) => ({ copyId: originId }),
  originUpdate: ({ originId }) => ({ id: originId }),
  originCert: ({ originId }) => ({ id: originId }),
  originDestroy: ({ originId }) => ({ id: originId }),
  memberUpdate: ({ userId }) => ({ id: userId }),
  updatePassword: ({ userId }) => ({ userId }),
  // An unknown token: the page that says the link is not valid.
  activate: () => ({ token: 'responsive-check' }),
  docs: () => ({ '*': '' }),
  catchAll: () => ({ '*': 'no/such/page' }),
};

/** The route's URL with its parameters filled in, and those parameters as the guard sees them. */
function target(id: string, ids: Ids): { url: string; params: Record<string, string> } {
  const { pattern } = routes[id]!;
  if (!/:\w|\*/.test(pattern)) return { url: pattern, params: {} };
  const parameters = PARAMETERS[id];
  if (!parameters) throw new Error(`responsive.spec.ts: route ${id} (${pattern}) needs ids in PARAMETERS`);
  const params = Object.fromEntries(
    Object.entries(parameters(ids)).map(([name, value]) => [name, String(value)]),
  );
  return { url: pattern.replace(/:(\w+)|\*/g, (_, name?: string) => params[name ?? '*']!), params };
}

async function call<T>(page: Page, operation: string, data: object = {}): Promise<T> {
  const response = await page.request.post(api(operation), { headers: UI_API, data });
  expect(response.ok(), `${operation} answered ${response.status()}`).toBe(true);
  return (await response.json()) as T;
}

async function logIn(page: Page, account: { email: string; password: string }) {
  await page.goto('/auth/login');
  await page.getByTestId('login-email').fill(account.email);
  await page.getByTestId('login-password').fill(account.password);
  await page.getByTestId('login-submit').click();
  await expect(page).not.toHaveURL(/\/auth\/login$/);
}

/**
 * Opens a route as the console's own links do, without loading the console again (React
 * Router follows the history's popstate as it follows Back): a full load per route spent most
 * of this file's time on parsing the bundle.
 */
async function openInApp(page: Page, url: string) {
  if (page.url() === 'about:blank') return void (await page.goto(url));
  await page.evaluate(async (to) => {
    history.pushState(null, '', to);
    dispatchEvent(new PopStateEvent('popstate'));
    // The router's render of the navigation (its progress bar, or the page) is done by the next
    // frame: `settled` must not read the page left behind.
    await new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve)));
  }, url);
}

/** The page has rendered its data: no navigation under way, no section still loading. */
async function settled(page: Page) {
  await page.waitForFunction(
    () =>
      document.querySelector('#main, [data-testid="login-form"]') !== null &&
      document.querySelector('.navigation-progress, [data-testid="loading"]') === null,
  );
  await page.evaluate(() => document.fonts.ready.then(() => new Promise(requestAnimationFrame)));
}

/**
 * What sticks out sideways: the page's own scroll width, and every visible element reaching past
 * the viewport unless a box that scrolls or clips (a table's own scroller) holds it. Only boxes
 * on the way to the element's containing block hold it: an absolutely positioned element
 * escapes a scroller that is not positioned.
 */
function sidewaysOverflow(): string[] {
  const width = window.innerWidth;
  const problems: string[] = [];
  const root = document.documentElement;
  if (root.scrollWidth > width) problems.push(`the page is ${root.scrollWidth} px wide`);
  const heldByScroller = (element: Element) => {
    let position = getComputedStyle(element).position;
    for (
      let parent = element.parentElement;
      parent && parent !== document.body;
      parent = parent.parentElement
    ) {
      const style = getComputedStyle(parent);
      if (position === 'fixed') return false;
      if (position === 'absolute' && style.position === 'static') continue;
      if (style.overflowX !== 'visible') return true;
      position = style.position;
    }
    return false;
  };
  for (const element of Array.from(document.body.querySelectorAll('*'))) {
    const box = element.getBoundingClientRect();
    if (box.width === 0 || box.height === 0) continue;
    if (box.left >= -0.5 && box.right <= width + 0.5) continue;
    if (heldByScroller(element)) continue;
    const testId = element.getAttribute('data-testid');
    const classes = Array.from(element.classList).slice(0, 3).join('.');
    const text = (element.textContent ?? '').trim().slice(0, 40);
    problems.push(
      `<${element.localName}${testId ? ` data-testid=${testId}` : ''}${classes ? ` .${classes}` : ''}> ` +
        `spans ${Math.round(box.left)}..${Math.round(box.right)} px "${text}"`,
    );
    if (problems.length >= 8) break;
  }
  return problems;
}

let demoOriginId = 0;

test.beforeAll(async ({ browser }) => {
  const page = await browser.newPage();
  await logIn(page, ADMIN);
  const { origins } = await call<{ origins: { originID: number }[] }>(page, 'origin.list');
  demoOriginId = origins[0]!.originID;
  await page.close();
});

for (const [viewportName, viewport] of Object.entries(VIEWPORTS)) {
  test.describe(`at ${viewportName}`, () => {
    test.use({ viewport });
    for (const [role, { account, language }] of Object.entries(ROLES)) {
      test(`every route fits the width for ${role}`, async ({ page }) => {
        test.setTimeout(120_000);
        const directory = `${ARTIFACTS}responsive/${viewportName}/`;
        mkdirSync(directory, { recursive: true });
        // Pictures of an earlier run would pass for this run's (a route the role lost, say).
        for (const file of readdirSync(directory).filter((name) => name.startsWith(`${role}-`))) {
          rmSync(`${directory}${file}`);
        }
        await page.addInitScript((value) => window.localStorage.setItem('ukiyo.language', value), language);
        let session: Session = { user: null, organization: null };
        if (account) {
          await logIn(page, account);
          session = await call<Session>(page, 'user.whoami');
        }
        const ids: Ids = { originId: demoOriginId, userId: session.user?.userID ?? 0 };
        // A route the role may not open only redirects to a page checked in its own right.
        const visits = Object.keys(routes).flatMap((id): [string, string][] => {
          const { url, params } = target(id, ids);
          return decideRoute(routes[id]!.guard, session, params).kind === 'allow' ? [[id, url]] : [];
        });
        // The documents share one layout; a visitor reads each of them once per viewport.
        if (role === 'guest') {
          for (const doc of DOCS_PAGES.filter((doc) => doc.slug !== '')) {
            visits.push([`docs-${doc.slug.replaceAll('/', '-')}`, docsPagePath(doc)]);
          }
        }
        const seen = new Set<string>();
        const problems: string[] = [];
        for (const [name, url] of visits) {
          await openInApp(page, url);
          await settled(page);
          // A page may still send the visitor on (an activated user's password page goes home):
          // a page already checked is not checked twice.
          const shown = new URL(page.url());
          const key = shown.pathname + shown.search;
          if (seen.has(key)) continue;
          seen.add(key);
          for (const problem of await page.evaluate(sidewaysOverflow)) {
            problems.push(`${name} (${url} → ${key}) as ${role} at ${viewportName}: ${problem}`);
          }
          await page.screenshot({ path: `${directory}${role}-${name}.png`, fullPage: true });
        }
        expect(problems, problems.join('\n')).toEqual([]);
      });
    }
  });
}

test('on a phone the documentation menu folds behind a button and the article comes first', async ({
  page,
}) => {
  await page.setViewportSize(VIEWPORTS['390x844']);
  await page.goto('/docs/image/signed-url');
  await expect(page.getByTestId('docs-article')).toBeVisible();
  await expect(page.getByTestId('docs-sidebar')).toBeHidden();
  const toggle = page.getByTestId('docs-menu-toggle');
  await expect(toggle).toHaveAttribute('aria-expanded', 'false');
  await toggle.click();
  await expect(toggle).toHaveAttribute('aria-expanded', 'true');
  await page.locator('[data-testid="docs-nav-link"][data-slug="image/custom-domain"]').click();
  await expect(page).toHaveURL(/\/docs\/image\/custom-domain$/);
  // Choosing a page folds the menu again.
  await expect(page.getByTestId('docs-sidebar')).toBeHidden();

  await page.setViewportSize(VIEWPORTS['1280x800']);
  await expect(page.getByTestId('docs-sidebar')).toBeVisible();
  await expect(toggle).toBeHidden();
});
