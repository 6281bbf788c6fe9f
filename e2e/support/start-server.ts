// Seeds a fresh embedded database for the browser tests, then runs the real server on it.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ALL_MEMBER_PERMISSIONS, Permission } from '@ukiyo/contract';
import { hashPassword } from '../../apps/server/src/auth/passwords.ts';
import {
  createOrganization,
  createSakuraAccount,
} from '../../apps/server/src/db/repositories/organizations.ts';
import { createUser, setUserRestrictions } from '../../apps/server/src/db/repositories/users.ts';
import {
  bootstrapAdministrator,
  createServerDeps,
  ensureDemoOrganization,
  loadConfig,
} from '../../apps/server/src/index.ts';
import { seedDeadLetters } from './dead-letters.ts';
import {
  ADMIN,
  DEMO_OWNER,
  EDGE_PORT,
  EDGE_TLS_PORT,
  LIVE_PORT,
  LIVE_RTMP_PORT,
  LIVE_SRT_PORT,
  LIVE_USER,
  STATS_ORG,
  STATS_USER,
} from './fixtures.ts';

Object.assign(process.env, {
  DATA_DIR: mkdtempSync(join(tmpdir(), 'ukiyo-e2e-')),
  HOST: '127.0.0.1',
  BOOTSTRAP_ADMIN_EMAIL: ADMIN.email,
  BOOTSTRAP_ADMIN_PASSWORD: ADMIN.password,
  DEMO: '1',
  LOG_LEVEL: 'warn',
  // The usage tests start an image origin on 127.0.0.1 and fetch through the edge.
  ALLOW_PRIVATE_ORIGINS: '1',
  EDGE_PORT: String(EDGE_PORT),
  EDGE_TLS_PORT: String(EDGE_TLS_PORT),
  LIVE_PORT: String(LIVE_PORT),
  LIVE_RTMP_PORT: String(LIVE_RTMP_PORT),
  LIVE_SRT_PORT: String(LIVE_SRT_PORT),
  // One process serves the console, the edge and live to every test on a machine the browsers
  // share: its thread is often busy, which is no live process full of viewers to turn away.
  LIVE_MAX_EVENT_LOOP_UTILIZATION: '1',
});

const config = loadConfig();
const { deps, database } = await createServerDeps(config);
await bootstrapAdministrator(deps.db, config);
await ensureDemoOrganization(deps.db, config);
const accountId = await createSakuraAccount(deps.db, {
  memberCode: STATS_ORG.memberCode,
  name: 'E2E Account',
});
const imageOrganization = await createOrganization(deps.db, {
  accountId,
  name: STATS_ORG.name,
  serviceCode: STATS_ORG.serviceCode,
});
const liveOrganization = await createOrganization(deps.db, {
  accountId,
  name: 'E2E Live',
  serviceCode: 'e2e-live',
  isLive: true,
});
const statsUser = await createUser(deps.db, {
  email: STATS_USER.email,
  full_name: 'Statistics Only',
  password_hash: await hashPassword(STATS_USER.password),
  permission: Permission.statistics,
  activated_at: new Date(),
  sakura_account_id: accountId,
});
await setUserRestrictions(deps.db, statsUser, [imageOrganization]);
const liveUser = await createUser(deps.db, {
  email: LIVE_USER.email,
  full_name: 'Live Operator',
  password_hash: await hashPassword(LIVE_USER.password),
  permission: Permission.channel | Permission.statistics,
  activated_at: new Date(),
  sakura_account_id: accountId,
});
await setUserRestrictions(deps.db, liveUser, [liveOrganization]);
const demo = await deps.db
  .selectFrom('organizations')
  .select(['id', 'sakura_account_id'])
  .where('service_code', '=', 'demo-image')
  .executeTakeFirstOrThrow();
const demoOwner = await createUser(deps.db, {
  email: DEMO_OWNER.email,
  full_name: 'Demo Owner',
  password_hash: await hashPassword(DEMO_OWNER.password),
  permission: ALL_MEMBER_PERMISSIONS,
  activated_at: new Date(),
  sakura_account_id: demo.sakura_account_id,
});
await setUserRestrictions(deps.db, demoOwner, [demo.id]);
await seedDeadLetters(deps, liveOrganization);
await deps.jobs.stop();
await database.close();

await import('../../apps/all-in-one/src/main.ts');
