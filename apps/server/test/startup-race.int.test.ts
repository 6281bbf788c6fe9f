import { randomBytes } from 'node:crypto';
import { SAMPLES_SERVICE_CODE } from '@ukiyo/contract';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_SERVICE_CODE } from '../src/services/bootstrap.ts';
import { testDatabaseUrl } from './harness.ts';
import { AppProcess, processEnv } from './processes.ts';

// Console servers of a fleet starting at the same moment on a database nobody has set up yet:
// each must come up, and the start-up's one-time work must be done once. PostgreSQL only
// (DATABASE_URL): PGlite serves a single process.
const runDatabaseUrl = testDatabaseUrl();
if (!runDatabaseUrl)
  console.warn('startup-race.int.test.ts skipped: needs DATABASE_URL (a shared PostgreSQL)');

const PROCESSES = 4;

describe.skipIf(!runDatabaseUrl)('console servers starting together on a fresh database', () => {
  const name = `ukiyo_race_${randomBytes(6).toString('hex')}`;
  const maintenanceUrl = new URL(runDatabaseUrl || 'postgres://unused/postgres');
  maintenanceUrl.pathname = '/postgres';
  const databaseUrl = new URL(maintenanceUrl);
  databaseUrl.pathname = `/${name}`;
  let servers: AppProcess[] = [];

  async function onServer(statement: string): Promise<void> {
    const client = new pg.Client({ connectionString: maintenanceUrl.toString() });
    await client.connect();
    await client.query(statement);
    await client.end();
  }

  beforeAll(async () => {
    await onServer(`create database ${name}`);
  });

  afterAll(async () => {
    await Promise.all(servers.map((server) => server.stop()));
    await onServer(`drop database if exists ${name} with (force)`);
  });

  it('all become ready, with one administrator, one samples and one demo organization', async () => {
    const secretKey = randomBytes(32).toString('base64');
    const environments = await Promise.all(
      Array.from({ length: PROCESSES }, () =>
        processEnv({ DATABASE_URL: databaseUrl.toString(), SECRET_KEY: secretKey, DEMO: '1' }),
      ),
    );
    servers = environments.map((env, index) =>
      new AppProcess(`server-${index + 1}`, 'apps/server/src/main-server.ts', env).start(),
    );
    await Promise.all(servers.map((server) => server.ready(90_000)));

    const db = new pg.Client({ connectionString: databaseUrl.toString() });
    await db.connect();
    try {
      const users = await db.query<{ email: string; permission: number }>(
        'select email, permission from users',
      );
      expect(users.rows).toEqual([{ email: 'admin@ukiyo.localhost', permission: 127 }]);
      const organizations = await db.query<{ service_code: string; count: number }>(
        'select service_code, count(*)::int as count from organizations group by service_code',
      );
      expect(organizations.rows).toHaveLength(2);
      expect(organizations.rows).toEqual(
        expect.arrayContaining([
          { service_code: DEMO_SERVICE_CODE, count: 1 },
          { service_code: SAMPLES_SERVICE_CODE, count: 1 },
        ]),
      );
    } finally {
      await db.end();
    }
    const announcing = servers.filter((server) => server.output.join('').includes('password (shown once)'));
    expect(announcing.map((server) => server.name)).toHaveLength(1);
  }, 120_000);
});
