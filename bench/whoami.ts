// user.whoami with a logged-in session at concurrency 16: the console's most frequent call.
// Target (issue 2): >= 5,000 req/s and p99 <= 20 ms on a 2-core machine.
import { measureRequests, startServer } from './lib.ts';

const EMAIL = 'bench@example.com';
const PASSWORD = 'bench-password-123';

const server = await startServer({
  BOOTSTRAP_ADMIN_EMAIL: EMAIL,
  BOOTSTRAP_ADMIN_PASSWORD: PASSWORD,
  DEMO: '1',
});
try {
  const headers = { 'Content-Type': 'application/json', 'X-Requested-With': 'XMLHttpRequest' };
  const login = await fetch(`${server.url}/.ui-api/auth.login?api-version=2.29`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ emailAddress: EMAIL, password: PASSWORD }),
  });
  const cookie = login.headers.getSetCookie().at(-1)!.split(';')[0]!;

  await measureRequests(
    'whoami',
    {
      url: `${server.url}/.ui-api/user.whoami?api-version=2.29`,
      method: 'POST',
      headers: { ...headers, Cookie: cookie },
      body: '{}',
    },
    { requestsPerSecond: '>= 5000', latencyP99Ms: '<= 20' },
  );
} finally {
  server.process.kill('SIGTERM');
}
