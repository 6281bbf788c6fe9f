/** Accounts the e2e seed creates; tests log in with these. */
export const ADMIN = { email: 'admin@e2e.example.com', password: 'admin-password-e2e' };
export const STATS_USER = { email: 'stats@e2e.example.com', password: 'stats-password-e2e' };
export const STATS_ORG = { memberCode: 'E2E0001', serviceCode: 'e2e-image', name: 'E2E Images' };
export const LIVE_USER = { email: 'live@e2e.example.com', password: 'live-password-e2e' };
