// statistics.origins for a month of 100 origins (hourly and daily usage rows as the edge's
// metering writes them). Target (issue 6): answers in <= 200 ms.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { ALL_MEMBER_PERMISSIONS } from '@ukiyo/contract';
import { hashPassword } from '../apps/server/src/auth/passwords.ts';
import { createOrganization, createSakuraAccount } from '../apps/server/src/db/repositories/organizations.ts';
import { createUser } from '../apps/server/src/db/repositories/users.ts';
import { createServerApp, createServerDeps, loadConfig } from '../apps/server/src/index.ts';
import { quantile, report } from './lib.ts';

const ORIGINS = 100;
const DAYS = 30;
const CALLS = 40;

const config = loadConfig({
  DATA_DIR: mkdtempSync(join(tmpdir(), 'ukiyo-bench-stats-')),
  LOG_LEVEL: 'warn',
  ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}),
});
const { deps, database } = await createServerDeps(config);
const accountId = await createSakuraAccount(deps.db, { memberCode: `BENCH${Date.now()}`, name: 'Bench' });
const organizationId = await createOrganization(deps.db, {
  accountId,
  name: 'Bench',
  serviceCode: `bench-${Date.now()}`,
});
const email = `bench-${Date.now()}@example.com`;
await createUser(deps.db, {
  email,
  password_hash: await hashPassword('bench-password-1'),
  permission: ALL_MEMBER_PERMISSIONS,
  activated_at: new Date(),
  sakura_account_id: accountId,
});

const now = new Date();
const monthStart = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1);
for (let o = 0; o < ORIGINS; o++) {
  const name = `bench${o}-${Date.now()}.img.localhost`;
  const origin = await deps.db
    .insertInto('origins')
    .values({
      organization_id: organizationId,
      name,
      origin_name: name,
      kind: 0,
      config: '{}',
      acl: '{"isAllowList":false,"cidrs":[]}',
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  const hourly = Array.from({ length: DAYS * 24 }, (_, h) => ({
    origin_id: origin.id,
    organization_id: organizationId,
    hour: new Date(monthStart + h * 3_600_000),
    requests: 100 + h,
    outbound_bytes: 1_000_000 + h,
  }));
  await deps.db.insertInto('usage_hourly').values(hourly).execute();
  const daily = Array.from({ length: DAYS }, (_, d) => ({
    origin_id: origin.id,
    organization_id: organizationId,
    day: new Date(monthStart + d * 86_400_000).toISOString().slice(0, 10),
    requests: 2400 + d,
    outbound_bytes: 24_000_000 + d,
  }));
  await deps.db.insertInto('usage_daily').values(daily).execute();
}

const app = createServerApp(deps, { consoleDist: join(tmpdir(), 'none') });
const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' });
await new Promise((resolve) => server.once('listening', resolve));
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const headers = { 'Content-Type': 'application/json', 'X-Requested-With': 'XMLHttpRequest' };
const login = await fetch(`${base}/.ui-api/auth.login?api-version=2.29`, {
  method: 'POST',
  headers,
  body: JSON.stringify({ emailAddress: email, password: 'bench-password-1' }),
});
const cookie = login.headers.getSetCookie().at(-1)!.split(';')[0]!;

async function timed(body: object): Promise<number> {
  const started = performance.now();
  const response = await fetch(`${base}/.ui-api/statistics.origins?api-version=2.29`, {
    method: 'POST',
    headers: { ...headers, Cookie: cookie },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`statistics.origins answered ${response.status}`);
  await response.json();
  return performance.now() - started;
}

const month = {
  from: new Date(monthStart).toISOString(),
  to: new Date(monthStart + DAYS * 86_400_000).toISOString(),
};
// A range off the day boundary reads the hourly table instead.
const hours = { from: new Date(monthStart + 3_600_000).toISOString(), to: month.to };
for (let i = 0; i < 5; i++) await timed(month);
const daily: number[] = [];
const hourly: number[] = [];
for (let i = 0; i < CALLS; i++) {
  daily.push(await timed(month));
  hourly.push(await timed(hours));
}
report(
  'statistics',
  {
    monthOf100OriginsP50Ms: Math.round(quantile(daily, 0.5)),
    monthOf100OriginsP99Ms: Math.round(quantile(daily, 0.99)),
    hourlyRangeP50Ms: Math.round(quantile(hourly, 0.5)),
    hourlyRangeP99Ms: Math.round(quantile(hourly, 0.99)),
  },
  { monthOf100OriginsP99Ms: '<= 200', hourlyRangeP99Ms: '<= 200' },
);
server.close();
await database.close();
