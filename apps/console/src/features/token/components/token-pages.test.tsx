import { cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ALL_PERMISSIONS, Permission } from '@ukiyo/contract';
import { flash } from '@/lib/flash.ts';
import { member } from '@/testing/fixtures.ts';
import { renderPage, stubUiApi } from '@/testing/render-page.tsx';
import { TokenIndexPage } from './token-index-page.tsx';
import { TokenNewPage } from './token-new-page.tsx';

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  flash.advance();
  flash.advance();
});

const offered = () =>
  within(screen.getByTestId('token-permission'))
    .getAllByRole('checkbox')
    .map((box) => box.getAttribute('data-testid'))
    .filter((id) => id !== 'token-permission-all');

const token = (authTokenID: number, enabled = true) => ({
  authTokenID,
  organizationID: 1,
  token: `************abc${authTokenID}`,
  enabled,
  deleted: false,
  description: `token ${authTokenID}`,
  createdAt: '2026-11-01T00:00:00.000Z',
  permission: null,
});

describe('the token form', () => {
  it('offers a member only the permission groups they hold', () => {
    renderPage(<TokenNewPage />, member(Permission.statistics | Permission.cache));
    expect(offered()).toEqual(['token-permission-statistics', 'token-permission-cache']);
  });

  it('offers an administrator every group', () => {
    renderPage(<TokenNewPage />, member(ALL_PERMISSIONS));
    expect(offered()).toHaveLength(7);
    expect(screen.getByTestId('token-permission-admin')).toBeTruthy();
  });
});

describe('the token list', () => {
  it('asks before disabling, and says so once the last token is deleted', async () => {
    let tokens = [token(1)];
    const calls = stubUiApi({
      'auth_token.list': () => ({ authTokens: tokens }),
      'auth_token.disable': () => {
        tokens = [token(1, false)];
        return { authToken: tokens[0] };
      },
      'auth_token.delete': () => {
        tokens = [];
        return {};
      },
    });
    renderPage(<TokenIndexPage />, member(Permission.statistics));

    fireEvent.click(await screen.findByTestId('token-disable'));
    const dialog = await screen.findByTestId('token-disable-modal');
    expect(calls.map((call) => call.operation)).not.toContain('auth_token.disable');
    fireEvent.click(within(dialog).getByTestId('token-disable-confirm'));
    await waitFor(() => expect(screen.getAllByTestId('flash-message')).toHaveLength(1));
    expect(calls.filter((call) => call.operation === 'auth_token.disable')).toHaveLength(1);

    fireEvent.click(await screen.findByTestId('token-delete'));
    fireEvent.click(
      within(await screen.findByTestId('token-delete-modal')).getByTestId('token-delete-confirm'),
    );
    expect(await screen.findByTestId('token-empty')).toBeTruthy();
    // "Deleted" replaced "disabled": one message about the token.
    await waitFor(() => expect(screen.getAllByTestId('flash-message')).toHaveLength(1));
    expect(screen.getByTestId('flash-message').textContent).toContain('トークンを削除しました');
  });
});
