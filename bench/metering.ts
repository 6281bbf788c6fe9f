// What the delivery analytics (issue 18) add to each edge request: Metering.record for a hit as
// the hit path calls it (status, cache result, format, path, transformation), against the
// edge's whole hit cost from bench/baselines/edge.json; and the batch write that takes the
// counts off the request path. The record's whole cost bounds what analytics added to it (the
// counting before them was a part of it). Target: <= 2 % of a hit.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import pino from 'pino';
import { Metering, type Delivery } from '../apps/edge/src/metering.ts';
import { openDatabase } from '../apps/server/src/db/database.ts';
import { migrateToLatest } from '../apps/server/src/db/migrate.ts';
import { report, round2, startPostgres } from './lib.ts';

const CALLS = Number(process.env.BENCH_CALLS ?? 2_000_000);
const PATHS = 1_000;

const postgres = await startPostgres();
const database = await openDatabase({
  databaseUrl: postgres.url,
  dataDir: mkdtempSync(join(tmpdir(), 'ukiyo-bench-metering-')),
});
try {
  await migrateToLatest(database.db);
  const unique = randomBytes(4).toString('hex');
  const account = await database.db
    .insertInto('sakura_accounts')
    .values({ member_code: `BENCH-${unique}`, name: 'bench' })
    .returning('id')
    .executeTakeFirstOrThrow();
  const organization = await database.db
    .insertInto('organizations')
    .values({ sakura_account_id: account.id, name: 'bench', service_code: `bench-${unique}`, is_live: false })
    .returning('id')
    .executeTakeFirstOrThrow();
  const origins = await database.db
    .insertInto('origins')
    .values(
      [1, 2, 3].map((n) => ({
        organization_id: organization.id,
        name: `bench-${n}-${unique}.img.localhost`,
        origin_name: `bench-${n}`,
        kind: 0,
        config: '{}',
        acl: '{"isAllowList": false, "cidrs": []}',
      })),
    )
    .returning('id')
    .execute();
  const metering = new Metering(database.db, pino({ level: 'silent' }));

  // Hits as the hit path records them: a new object per answer, strings it already holds.
  const paths = Array.from({ length: PATHS }, (_, i) => `/images/photo-${i}.jpg`);
  const transforms = Array.from({ length: 20 }, (_, i) => `w=${100 + i * 20},f=webp`);
  const deliveries = (count: number) => {
    const started = performance.now();
    for (let i = 0; i < count; i++) {
      const delivery: Delivery = {
        status: 200,
        bytes: 7182,
        cache: 'memory',
        sourceBytes: 412_000,
        format: 'webp',
        path: paths[i % PATHS]!,
        transform: transforms[i % 20]!,
      };
      metering.record(origins[i % 3]!.id, organization.id, delivery);
    }
    return performance.now() - started;
  };
  deliveries(200_000); // warm-up: JIT and the maps
  const elapsedMs = deliveries(CALLS);
  const flushStarted = performance.now();
  await metering.flush();
  const flushMs = performance.now() - flushStarted;

  const edge = JSON.parse(readFileSync(new URL('baselines/edge.json', import.meta.url), 'utf8')) as {
    hit_cpuMs: number;
  };
  const recordNs = (elapsedMs * 1e6) / CALLS;
  report(
    'metering',
    {
      recordNs: round2(recordNs),
      edgeHitCpuNs: edge.hit_cpuMs * 1e6,
      shareOfHit: round2((recordNs / (edge.hit_cpuMs * 1e6)) * 100) / 100,
      flushMs: round2(flushMs),
    },
    { shareOfHit: '<= 0.02' },
  );
} finally {
  await database.close();
  if (postgres.process?.pid) process.kill(-postgres.process.pid, 'SIGINT');
}
