import type { Organization, User } from '@ukiyo/contract';

// The sessions the console's tests build, in one place: vary them with the arguments.

/** A logged-in, activated member of an image organization holding `permission`. */
export function member(permission: number, overrides: Partial<User> = {}): User {
  return {
    userID: 7,
    emailAddress: 'me@example.com',
    fullName: 'Me',
    permission,
    enabled: true,
    activatedAt: '2026-01-01T00:00:00.000Z',
    sakuraAccount: null,
    restriction: { organizationIDs: [] },
    totpEnabled: false,
    ...overrides,
  };
}

/** An image organization, or a live one. */
export function organization(isLive = false): Organization {
  return {
    organizationID: 1,
    name: 'Org',
    memberCode: 'M0001',
    serviceCode: 'svc',
    serviceDomain: 'svc.example.com',
    plan: 4,
    features: { imageConversion: !isLive, live: isLive },
    isLive,
    enableTextOverlay: false,
    description: '',
    sakuraAccount: { sakuraAccountID: 1, sakuraMemberCode: 'M0001', name: 'Account' },
  };
}

export const ORGANIZATION = organization();
