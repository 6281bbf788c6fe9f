/** Accounts the e2e seed creates; tests log in with these. */
export const ADMIN = { email: 'admin@e2e.example.com', password: 'admin-password-e2e' };
/** Holds every permission but the administrator's in the demo image organization (DEMO0001). */
export const DEMO_OWNER = { email: 'owner@e2e.example.com', password: 'owner-password-e2e' };
export const STATS_USER = { email: 'stats@e2e.example.com', password: 'stats-password-e2e' };
export const STATS_ORG = { memberCode: 'E2E0001', serviceCode: 'e2e-image', name: 'E2E Images' };
export const LIVE_USER = { email: 'live@e2e.example.com', password: 'live-password-e2e' };
/**
 * The image edge's port in the e2e server (ALLOW_PRIVATE_ORIGINS=1 there, so origins on
 * 127.0.0.1 work): E2E_EDGE_PORT, else E2E_PORT + 1000 so parallel runs on other ports do not
 * collide.
 */
export const EDGE_PORT = Number(process.env.E2E_EDGE_PORT ?? Number(process.env.E2E_PORT ?? 18_480) + 1000);
/** The edge's HTTPS port (custom domains): E2E_PORT + 2000, for the same reason. */
export const EDGE_TLS_PORT = Number(process.env.E2E_PORT ?? 18_480) + 2000;
/** The live server's port (WHIP, HLS, live API): E2E_PORT + 3000, for the same reason. */
export const LIVE_PORT = Number(process.env.E2E_PORT ?? 18_480) + 3000;
/** The live server's RTMP ingest port: E2E_PORT + 4000, for the same reason. */
export const LIVE_RTMP_PORT = Number(process.env.E2E_PORT ?? 18_480) + 4000;
/** The live server's SRT ingest port (UDP): E2E_PORT + 5000, for the same reason. */
export const LIVE_SRT_PORT = Number(process.env.E2E_PORT ?? 18_480) + 5000;
