// user.whoami with a logged-in session at concurrency 16: the console's most frequent call.
// Target (issue 2): >= 5,000 req/s and p99 <= 20 ms on a 2-core machine.
import autocannon from 'autocannon';
import { report, startServer } from './lib.ts';

const EMAIL = 'bench@example.com';
const PASSWORD = 'bench-password-123';
const DURATION_S = Number(process.env.BENCH_DURATION ?? 15);

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

  const run = (duration: number) =>
    autocannon({
      url: `${server.url}/.ui-api/user.whoami?api-version=2.29`,
      method: 'POST',
      headers: { ...headers, Cookie: cookie },
      body: '{}',
      connections: 16,
      duration,
    });
  await run(3); // warm-up: JIT and caches
  const result = await run(DURATION_S);
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`${result.non2xx} non-2xx, ${result.errors} errors`);
  report(
    'whoami',
    {
      requestsPerSecond: Math.round(result.requests.average),
      latencyP50Ms: result.latency.p50,
      latencyP99Ms: result.latency.p99,
    },
    { requestsPerSecond: '>= 5000', latencyP99Ms: '<= 20' },
  );
} finally {
  server.process.kill('SIGTERM');
}
