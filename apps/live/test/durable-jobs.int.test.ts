import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServerDeps, loadConfig, type ServerDeps } from '@ukiyo/server';
import {
  AppProcess,
  createTenant,
  freePort,
  processEnv,
  rotateWebhookSecret,
  SecretBox,
  sleep,
  testServer,
  until,
  testDatabaseUrl,
} from '@ukiyo/server/testing';
import { apiToken, startS3, verified } from './helpers.ts';

// Issue 20's proof: `npm start`'s process (apps/all-in-one/src/main.ts) is killed with SIGKILL in
// the middle of a burst of archive uploads and event webhooks, and started again on the same
// data. Every queued upload and event gets through, and a receiver that keeps the webhook-ids it
// has handled handles each event once. On embedded PGlite (the default), or on the run's
// PostgreSQL database when DATABASE_URL is set.
const databaseUrl = testDatabaseUrl();
const ALL_IN_ONE = 'apps/all-in-one/src/main.ts';

/** A receiver as the docs tell customers to write one: verify, then skip ids already handled. */
async function idempotentReceiver(secret: () => string) {
  const handled = new Map<string, Record<string, unknown>>();
  let deliveries = 0;
  let duplicates = 0;
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      deliveries++;
      const id = String(req.headers['webhook-id']);
      let event: Record<string, unknown>;
      try {
        event = verified(secret(), { path: req.url ?? '', body, headers: req.headers });
      } catch {
        res.writeHead(401).end();
        return;
      }
      // Slow answers (four at a time are sent), so events queue up faster than they are
      // delivered and some are in flight when the process is killed.
      setTimeout(() => {
        if (handled.has(id)) duplicates++;
        else handled.set(id, event);
        res.writeHead(204).end();
      }, 1_000);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { server, url, handled, counts: () => ({ deliveries, duplicates }) };
}

/** The database the process runs on, opened by the test when the process is not running it. */
async function openData(env: Record<string, string>): Promise<{ deps: ServerDeps; close(): Promise<void> }> {
  if (databaseUrl) {
    // The run's database, with the process's key, so what the test seals the process opens.
    const { deps } = await testServer();
    const secrets = SecretBox.load({ secretKey: env.SECRET_KEY, dataDir: env.DATA_DIR! });
    return { deps: { ...deps, secrets }, close: async () => {} };
  }
  const { deps, database } = await createServerDeps(loadConfig({ ...env, LOG_LEVEL: 'silent' }));
  return {
    deps,
    close: async () => {
      await deps.jobs.stop();
      await database.close();
    },
  };
}

describe('durable jobs across a SIGKILL', () => {
  let app: AppProcess | undefined;
  let storage: Awaited<ReturnType<typeof startS3>> | undefined;
  let s3: S3Client;
  let endPoint: string;
  let receiver: Awaited<ReturnType<typeof idempotentReceiver>>;
  let secret = '';

  beforeAll(async () => {
    storage = await startS3();
    ({ endPoint, s3 } = storage);
    receiver = await idempotentReceiver(() => secret);
  });

  afterAll(async () => {
    await app?.stop('SIGKILL');
    await storage?.close();
    receiver?.server.close();
  });

  it('delivers every queued upload and event after a restart, each event handled once', async () => {
    const env = await processEnv({
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
      SECRET_KEY: randomBytes(32).toString('base64'),
      ALLOW_PRIVATE_ORIGINS: '1',
      LIVE_PORT: String(await freePort()),
      SHUTDOWN_GRACE_SECONDS: '2',
    });
    // The tenant, its API token and its signing secret, written before the process starts
    // (embedded PGlite admits one process at a time).
    const seeded = await openData(env);
    const tenant = await createTenant(seeded.deps, { isLive: true });
    const organizationId = tenant.organizationIds[0]!;
    const token = await apiToken(seeded, organizationId);
    secret = (await rotateWebhookSecret(seeded.deps.db, seeded.deps.secrets, organizationId)).secret;
    await seeded.close();

    const started = () => new AppProcess('all-in-one', ALL_IN_ONE, env).start();
    app = started();
    await app.ready();
    const liveUrl = `http://127.0.0.1:${env.LIVE_PORT}`;
    const call = async (target: string, body: unknown) => {
      const response = await fetch(`${liveUrl}/`, {
        method: 'POST',
        headers: { 'X-Sora-Target': target, Authorization: `Bearer ${token}` },
        body: JSON.stringify(body),
      });
      return (await response.json()) as Record<string, string>;
    };
    const destination = await call('ImageFlux_20190205.CreateArchiveDestination', {
      bucket_uri: 's3://archive/burst',
      aws_end_point: endPoint,
      aws_access_key_id: 'S3RVER',
      aws_secret_access_key: 'S3RVER',
    });
    const archive = { archive_destination_id: destination.archive_destination_id };
    const channel = await call('ImageFlux_20200316.CreateMultistreamChannelWithHLS', {
      hls: [320, 240, 160].map((width) => ({
        durationSeconds: 1,
        video: { width, height: (width / 16) * 9, fps: 15, bps: 200_000 },
        archive,
      })),
      event_webhook_url: `${receiver.url}/events`,
    });
    expect(channel.channel_id, JSON.stringify(channel)).toBeDefined();

    // ffmpeg publishes over RTMP: three renditions of a segment a second, each segment uploaded
    // with its playlist, each upload announced by an event: six events a second.
    const publisher = spawn(
      'ffmpeg',
      [
        ...['-hide_banner', '-loglevel', 'error', '-re'],
        ...['-f', 'lavfi', '-i', 'testsrc=size=320x180:rate=15', '-t', '20'],
        ...['-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-g', '15'],
        ...['-f', 'flv', `rtmp://127.0.0.1:${env.LIVE_RTMP_PORT}/live/${channel.stream_key}`],
      ],
      { stdio: 'ignore' },
    );
    try {
      await until(
        'a burst of archive events',
        async () => (receiver.handled.size >= 6 ? true : undefined),
        60_000,
      );
      await sleep(2_000);
      app.child.kill('SIGKILL');
      await app.exited;
    } finally {
      publisher.kill('SIGKILL');
    }
    const handledAtKill = receiver.handled.size;

    app = started();
    await app.ready();
    const restartedAt = Date.now();
    if (databaseUrl) {
      // On PostgreSQL, where other processes may work the queue, a job in hand at the kill is
      // tried again once its attempt has expired (15 s for a webhook, 60 s for an upload), found
      // by the maintenance (every 10 s) and retried after its backoff (5 to 10 s). The test reads
      // the queue beside the process until every job of the tenant is done.
      const queue = await testServer();
      await until(
        'the queue drained',
        async () => {
          const { rows } = await sql<{ pending: number }>`
            select count(*)::integer as pending from pgboss.job
            where name in ('webhook', 'archive-upload') and state < 'completed'
              and (data->>'organizationId')::integer = ${organizationId}
          `.execute(queue.deps.db);
          return rows[0]!.pending === 0 ? true : undefined;
        },
        180_000,
        1_000,
      );
    } else {
      // Embedded PGlite has one process: at start it fails the jobs the killed one held, so they
      // are retried after their backoff (5 to 10 s), not once their attempt expires. The queue
      // cannot be read while the process holds the database: it has drained once deliveries
      // have stopped, three backoffs after the start.
      let settled = -1;
      await until(
        'the queue drained',
        async () => {
          const now = receiver.counts().deliveries;
          const quiet = now === settled;
          settled = now;
          return quiet && Date.now() - restartedAt > 30_000 ? true : undefined;
        },
        180_000,
        10_000,
      );
    }
    await app.stop('SIGTERM');
    app = undefined;

    const after = await openData(env);
    try {
      const { rows: jobs } = await sql<{ name: string; state: string; message_id: string | null }>`
        select name, state, data->>'messageId' as message_id from pgboss.job
        where name in ('webhook', 'archive-upload')
          and (data->>'organizationId')::integer = ${organizationId}
      `.execute(after.deps.db);
      const waiting = await after.deps.db
        .selectFrom('archive_uploads')
        .select('object_key')
        .where('organization_id', '=', organizationId)
        .execute();
      expect(waiting).toEqual([]);
      expect(jobs.filter((job) => job.state !== 'completed')).toEqual([]);
      const events = jobs.filter((job) => job.name === 'webhook');
      // Every queued event reached the receiver, which handled each id once.
      expect(new Set(events.map((job) => job.message_id)).size).toBe(events.length);
      for (const job of events) expect(receiver.handled.has(job.message_id!)).toBe(true);
      expect(receiver.handled.size).toBe(events.length);
    } finally {
      await after.close();
    }

    // Each archived object was announced exactly once, and each announcement names an object.
    const created = [...receiver.handled.values()]
      .filter((event) => event.type === 'imageflux.archive_created')
      .map((event) => (event.data as { file_path: string }).file_path);
    const objects = await s3.send(new ListObjectsV2Command({ Bucket: 'archive', Prefix: 'burst/' }));
    const keys = (objects.Contents ?? []).map((object) => object.Key!);
    const segments = created.filter((path) => path.endsWith('.ts'));
    expect(new Set(segments).size).toBe(segments.length);
    expect([...new Set(created)].sort()).toEqual([...keys].sort());
    expect(receiver.handled.size).toBeGreaterThan(handledAtKill);
    // Deliveries in flight at the kill reached the receiver and were sent again after it.
    expect(receiver.counts().duplicates).toBeGreaterThan(0);
    console.log(
      `durable jobs: ${receiver.handled.size} events (${handledAtKill} before the kill), ` +
        `${receiver.counts().deliveries} deliveries, ${receiver.counts().duplicates} repeated ids skipped, ` +
        `${keys.length} objects`,
    );
  }, 300_000);
});
