import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createMemoryRouter } from 'react-router';
import { Permission, type Organization, type User } from '@ukiyo/contract';
import { flash } from '@/lib/flash.ts';
import { clearSession, getSession } from '@/lib/session.ts';
import { member, ORGANIZATION } from '@/testing/fixtures.ts';
import { createConsoleRouter } from './router.tsx';
import { paths } from './paths.ts';

type Whoami = { user: User | null; organization: Organization | null } | 'fail';

const statisticsUser = member(Permission.statistics, { userID: 5 });

let whoami: Whoami;

beforeEach(() => {
  clearSession();
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string) => {
      if (url === '/index.html') return new Response(null, { status: 200, headers: { ETag: '"v1"' } });
      if (whoami === 'fail') return new Response('bad gateway', { status: 502 });
      return new Response(JSON.stringify(whoami), { status: 200 });
    }),
  );
});

afterEach(() => {
  vi.unstubAllGlobals();
  flash.advance();
  flash.advance();
});

async function start(url: string) {
  const router = createConsoleRouter((tree) => createMemoryRouter(tree, { initialEntries: [url] }));
  await vi.waitFor(() =>
    expect(router.state.initialized && router.state.navigation.state === 'idle').toBe(true),
  );
  return router;
}

describe('root loader', () => {
  it('restores the session and sends the logged-out to the login page', async () => {
    whoami = { user: null, organization: null };
    const router = await start(paths.statistics());
    expect(router.state.location.pathname).toBe(paths.login());
  });

  it('follows the home redirect table once the session is known', async () => {
    whoami = { user: statisticsUser, organization: ORGANIZATION };
    const router = await start(paths.home());
    expect(router.state.location.pathname).toBe(paths.statistics());
    expect(getSession().user?.userID).toBe(5);
  });

  it('turns a missing permission into the not-found page with its message', async () => {
    whoami = { user: statisticsUser, organization: ORGANIZATION };
    const router = await start(paths.statistics());
    await router.navigate(paths.cache());
    expect(router.state.location.pathname).toBe(paths.notFound());
    expect(flash.current().map((message) => message.key)).toEqual(['limit.notEnoughPermission']);
    await router.navigate(paths.statistics());
    expect(flash.current()).toEqual([]);
  });

  it('keeps a guard message across a chain of redirects', async () => {
    whoami = { user: statisticsUser, organization: ORGANIZATION };
    const router = await start(paths.channel());
    expect(router.state.location.pathname).toBe(paths.statistics());
    expect(flash.current().map((message) => message.key)).toEqual(['limit.liveStreamingNotAvailable']);
  });

  it('cancels a navigation when the session cannot be checked', async () => {
    whoami = { user: statisticsUser, organization: ORGANIZATION };
    const router = await start(paths.statistics());
    whoami = 'fail';
    await router.navigate(paths.tokenIndex());
    await vi.waitFor(() => expect(router.state.navigation.state).toBe('idle'));
    expect(router.state.location.pathname).toBe(paths.statistics());
    expect(flash.current().map((message) => [message.variant, message.key])).toEqual([
      ['danger', 'error.internal'],
    ]);
    expect(getSession().user?.userID).toBe(5);
  });

  it('tells a user whose session ended on the server why they are on the login page', async () => {
    whoami = { user: statisticsUser, organization: ORGANIZATION };
    const router = await start(paths.statistics());
    // The member was disabled meanwhile: the server no longer knows the session.
    whoami = { user: null, organization: null };
    await router.navigate(paths.tokenIndex());
    expect(router.state.location.pathname).toBe(paths.login());
    expect(flash.current().map((message) => [message.variant, message.key])).toEqual([
      ['danger', 'error.sessionInvalid'],
    ]);
  });

  it('treats a failed first check as logged out', async () => {
    whoami = 'fail';
    const router = await start(paths.docs());
    expect(router.state.location.pathname).toBe(paths.docs());
    expect(getSession().user).toBeNull();
    expect(flash.current().map((message) => message.key)).toEqual(['error.internal']);
  });
});
