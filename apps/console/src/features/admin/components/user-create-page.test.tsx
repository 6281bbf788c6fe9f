import { cleanup, fireEvent, screen, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ALL_PERMISSIONS } from '@ukiyo/contract';
import { flash } from '@/lib/flash.ts';
import { member, ORGANIZATION } from '@/testing/fixtures.ts';
import { renderPage, stubUiApi } from '@/testing/render-page.tsx';
import { UserCreatePage } from './user-create-page.tsx';

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  flash.advance();
  flash.advance();
});

const type = (testId: string, value: string) =>
  fireEvent.change(screen.getByTestId(testId), { target: { value } });

describe('the organization and user form', () => {
  it('sends the new account, organization and user as the operation takes them', async () => {
    const calls = stubUiApi({
      'admin.list_organizations': { organizations: [ORGANIZATION] },
      'admin.register': (input: { organization: { name: string }; user: { emailAddress: string } }) => ({
        organization: { ...ORGANIZATION, name: input.organization.name },
        user: { ...member(ALL_PERMISSIONS), emailAddress: input.user.emailAddress },
      }),
    });
    renderPage(<UserCreatePage />, member(ALL_PERMISSIONS));
    await screen.findByTestId('register-form');
    type('register-member-code', 'ACC0001');
    type('register-account-name', 'Accounts');
    type('register-organization-name', 'Accounts Org');
    type('register-service-code', 'acc-e2e');
    fireEvent.change(screen.getByTestId('register-plan'), { target: { value: '2' } });
    fireEvent.click(screen.getByTestId('register-is-live'));
    type('register-email', 'owner@example.com');
    type('register-full-name', 'Owner Person');
    type('register-password', 'owner-password-1');
    type('register-password-confirmation', 'owner-password-1');
    fireEvent.click(screen.getByTestId('register-submit'));

    await waitFor(() => expect(calls.map((call) => call.operation)).toContain('admin.register'));
    const sent = calls.find((call) => call.operation === 'admin.register')?.body;
    expect(sent).toMatchObject({
      sakuraAccount: { sakuraAccountID: 0, sakuraMemberCode: 'ACC0001', name: 'Accounts' },
      organization: { name: 'Accounts Org', serviceCode: 'acc-e2e', plan: 2, isLive: true },
      user: { emailAddress: 'owner@example.com', fullName: 'Owner Person' },
      password: 'owner-password-1',
    });
    expect(sent).not.toHaveProperty('confirmation');
  });

  it('shows the schema refusals on the fields instead of sending', async () => {
    const calls = stubUiApi({ 'admin.list_organizations': { organizations: [] } });
    renderPage(<UserCreatePage />, member(ALL_PERMISSIONS));
    fireEvent.click(await screen.findByTestId('register-submit'));
    await waitFor(() => expect(screen.getByTestId('register-email').className).toContain('is-invalid'));
    expect(calls.map((call) => call.operation)).not.toContain('admin.register');
  });
});
