// GET /api/v1/origins with an API token at concurrency 16: the Platform API's most frequent
// read (CI listing origins), on the demo organization's origins, on PostgreSQL as a fleet runs
// it (DATABASE_URL, else a throw-away local server).
// Target (issue 19): >= 3,000 req/s on a 2-core machine.
import { once } from 'node:events';
import { call, measureRequests, startPostgres, startServer, stopPostgres } from './lib.ts';

const EMAIL = 'bench@example.com';
const PASSWORD = 'bench-password-123';

const database = await startPostgres();
const server = await startServer({
  DATABASE_URL: database.url,
  BOOTSTRAP_ADMIN_EMAIL: EMAIL,
  BOOTSTRAP_ADMIN_PASSWORD: PASSWORD,
  DEMO: '1',
  // The token's budget must not be what is measured.
  API_V1_RATE_PER_MINUTE: '100000000',
});
try {
  let { cookie } = await call(server.url, '', 'auth.login', { emailAddress: EMAIL, password: PASSWORD });
  const { json: listed } = await call(server.url, cookie, 'organization.list', {});
  const demo = (listed.organizations as { organizationID: number; serviceCode: string }[]).find(
    (organization) => organization.serviceCode === 'demo-image',
  )!;
  ({ cookie } = await call(server.url, cookie, 'auth.change_organization', {
    organizationID: demo.organizationID,
  }));
  const { json: added } = await call(server.url, cookie, 'auth_token.add', {
    authToken: { description: 'bench', permission: null },
  });

  await measureRequests(
    'api',
    {
      url: `${server.url}/api/v1/origins`,
      headers: { Authorization: `Bearer ${added.encodedToken as string}` },
    },
    { requestsPerSecond: '>= 3000' },
  );
} finally {
  server.process.kill('SIGTERM');
  await once(server.process, 'exit');
  stopPostgres(database.process);
}
