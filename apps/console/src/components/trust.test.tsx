import { QueryClientProvider, useQuery } from '@tanstack/react-query';
import { act, cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Permission } from '@ukiyo/contract';
import { CachePage } from '@/features/cache/components/cache-page.tsx';
import { NotFoundPage } from '@/features/errors/components/not-found-page.tsx';
import { MemberIndexPage } from '@/features/member/components/member-index-page.tsx';
import { MemberUpdatePage } from '@/features/member/components/member-update-page.tsx';
import { callApi } from '@/lib/api-client.ts';
import { useSessionLossRedirect } from '@/lib/api-errors.ts';
import { flash } from '@/lib/flash.ts';
import { queryClient } from '@/lib/query-client.ts';
import { getSession, setSession } from '@/lib/session.ts';
import { member, ORGANIZATION } from '@/testing/fixtures.ts';
import { renderPage, stubUiApi } from '@/testing/render-page.tsx';

/**
 * What the console says must be believable on every screen: one flash story per page, one
 * message on a refused or missing page, and a question before what cannot be undone.
 */
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  flash.advance();
  flash.advance();
});

const messages = () => screen.queryAllByTestId('flash-message').map((alert) => alert.textContent ?? '');
const OWNER = member(Permission.member | Permission.cache | Permission.statistics);

describe('the flash bar', () => {
  it('shows the latest outcome of an action and never a success beside a later failure', async () => {
    renderPage(<p>page</p>, OWNER);
    act(() => {
      flash.now({ variant: 'success', key: 'token.disabled', action: 'token' });
      flash.now({ variant: 'success', key: 'token.deleted', action: 'token' });
    });
    await waitFor(() => expect(messages()).toEqual(['トークンを削除しました']));
    act(() => flash.now({ variant: 'danger', key: 'error.internal', action: 'profile' }));
    await waitFor(() => expect(messages()).toEqual(['内部エラーが発生しました']));
  });
});

describe('a session that ended on the server', () => {
  it('leads from any refused query to the login page with the message', async () => {
    vi.stubGlobal(
      'fetch',
      vi.fn(async () => Response.json({ error: 'session is invalid' }, { status: 403 })),
    );
    // A page that reports none of its query's failures: the layout's hook still hears it.
    function Quiet() {
      useSessionLossRedirect();
      useQuery({ queryKey: ['user.list'], queryFn: () => callApi('user.list', {}) });
      return <p>quiet</p>;
    }
    setSession({ user: OWNER, organization: ORGANIZATION });
    const router = createMemoryRouter(
      [
        { path: '/member/', element: <Quiet /> },
        { path: '/auth/login', element: <p>login</p> },
      ],
      { initialEntries: ['/member/'] },
    );
    render(
      <QueryClientProvider client={queryClient}>
        <RouterProvider router={router} />
      </QueryClientProvider>,
    );
    await waitFor(() => expect(router.state.location.pathname).toBe('/auth/login'));
    expect(getSession().user).toBeNull();
    flash.advance();
    expect(flash.current().map((message) => message.key)).toEqual(['error.sessionInvalid']);
    queryClient.clear();
  });
});

describe('a refused or missing page', () => {
  it('says once that the page is refused', async () => {
    act(() => {
      flash.next('limit.notEnoughPermission');
      flash.advance();
    });
    renderPage(<NotFoundPage />, OWNER, '/404');
    await waitFor(() => expect(messages()).toEqual(['このページへのアクセス権限がありません']));
    expect(screen.getByTestId('not-found').textContent).not.toContain('ページが見つかりません');
  });

  it('says once that a member does not exist', async () => {
    stubUiApi({});
    renderPage(<MemberUpdatePage />, OWNER, '/member/999/update');
    expect(await screen.findByTestId('member-not-found')).toBeTruthy();
    // The server's 'not found' stays out of the flash bar: the page already says it.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(messages()).toEqual([]);
  });
});

describe('destructive actions ask first', () => {
  const target = member(0, { userID: 8, emailAddress: 'other@example.com' });

  it('disabling a member, not enabling one', async () => {
    let enabled = true;
    const calls = stubUiApi({
      'user.list': () => ({ users: [OWNER, { ...target, enabled }] }),
      'organization.plan_features': {
        features: {
          originLimit: 1,
          userLimit: null,
          supportEmail: false,
          customDomain: false,
          s3Origins: true,
        },
      },
      'user.set_enabled': (input: unknown) => {
        enabled = (input as { enabled: boolean }).enabled;
        return { user: { ...target, enabled } };
      },
    });
    renderPage(<MemberIndexPage />, OWNER);
    const row = () => screen.getAllByTestId('member-row').find((tr) => tr.dataset.userId === '8')!;
    await waitFor(() => expect(screen.getAllByTestId('member-row')).toHaveLength(2));

    fireEvent.click(within(row()).getByTestId('member-toggle-enabled'));
    const dialog = await screen.findByTestId('member-disable-modal');
    expect(dialog.textContent).toContain('other@example.com');
    expect(calls.some((call) => call.operation === 'user.set_enabled')).toBe(false);
    fireEvent.click(within(dialog).getByTestId('member-disable-confirm'));
    await waitFor(() => expect(enabled).toBe(false));

    await waitFor(() =>
      expect(within(row()).getByTestId('member-enabled').getAttribute('data-enabled')).toBe('false'),
    );
    fireEvent.click(within(row()).getByTestId('member-toggle-enabled'));
    await waitFor(() => expect(enabled).toBe(true));
  });

  it('deleting the cache', async () => {
    const calls = stubUiApi({
      'origin.list_minimum': { origins: [{ originID: 3, name: 'abc.img.example.com', originName: '' }] },
      'cache.delete': { urls: ['https://abc.img.example.com/w=100/a.jpg'] },
    });
    renderPage(<CachePage />, OWNER, '/cache?origin=3&url=/a.jpg');
    // The page's two forms (one image, many images) each list the origins.
    await screen.findAllByRole('option', { name: 'abc.img.example.com' });
    fireEvent.click(screen.getByTestId('cache-delete'));
    const dialog = await screen.findByTestId('cache-delete-modal');
    expect(calls.some((call) => call.operation === 'cache.delete')).toBe(false);
    fireEvent.click(within(dialog).getByTestId('cache-delete-confirm'));
    await waitFor(() => expect(messages()).toEqual(['キャッシュを削除しました']));
    expect(calls.filter((call) => call.operation === 'cache.delete')).toHaveLength(1);
  });
});
