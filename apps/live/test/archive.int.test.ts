import { randomBytes } from 'node:crypto';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { CreateBucketCommand, GetObjectCommand } from '@aws-sdk/client-s3';
import type { DeadLetter } from '@ukiyo/contract';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobQueue } from '@ukiyo/server';
import {
  type Client,
  createTenant,
  createTestUser,
  loggedIn,
  rotateWebhookSecret,
  type TestServer,
  testServer,
  until,
} from '@ukiyo/server/testing';
import { Archive } from '../src/archive.ts';
import { Webhooks } from '../src/webhooks.ts';
import { receiver, startS3, verified } from './helpers.ts';

/**
 * Archive uploads as jobs, against s3rver: a bucket that is missing fails every attempt, the
 * last one announces `imageflux.archive_failed` and leaves a dead letter; once the bucket exists,
 * the administrators' retry uploads the session's files in order, each announced once.
 */
let server: TestServer;
let queue: JobQueue;
let storage: Awaited<ReturnType<typeof startS3>>;
let hook: Awaited<ReturnType<typeof receiver>>;
let admin: Client;
let archive: Archive;
const stops: Array<() => Promise<void>> = [];

beforeAll(async () => {
  server = await testServer();
  storage = await startS3();
  hook = await receiver();
  queue = new JobQueue(server.deps.db, pino({ level: 'silent' }), {
    policies: {
      'archive-upload': { limit: 1, delaySeconds: 1, expireSeconds: 30 },
      webhook: { limit: 2, delaySeconds: 1, expireSeconds: 10 },
    },
  });
  await queue.start();
  const agents = { http: new HttpAgent(), https: new HttpsAgent() };
  const deps = { db: server.deps.db, secrets: server.deps.secrets, jobs: queue };
  const webhooks = new Webhooks(
    { agents, allowPrivate: true, timeoutMs: 1_000 },
    deps,
    pino({ level: 'silent' }),
  );
  archive = new Archive(deps, webhooks, agents, true);
  stops.push(await webhooks.work(2), await archive.work(2));
  const { email } = await createTestUser(server.deps, { accountId: null, permission: 127 });
  admin = await loggedIn(server.baseUrl, email);
});
afterAll(async () => {
  for (const stop of stops) await stop();
  await queue.stop();
  await storage.close();
  hook.server.close();
});

describe('archive uploads through the job queue', () => {
  it('fails into a dead letter with its event, then uploads in order once retried', async () => {
    const tenant = await createTenant(server.deps, { isLive: true });
    const organizationId = tenant.organizationIds[0]!;
    const { secret } = await rotateWebhookSecret(server.deps.db, server.deps.secrets, organizationId);
    const bucket = `late-${randomBytes(4).toString('hex')}`;
    const destinationId = randomBytes(10).toString('hex');
    await server.deps.db
      .insertInto('archive_destinations')
      .values({
        id: destinationId,
        organization_id: organizationId,
        bucket_uri: `s3://${bucket}/rec`,
        config_enc: server.deps.secrets.seal(
          JSON.stringify({
            aws_end_point: storage.endPoint,
            aws_region: '',
            aws_access_key_id: 'S3RVER',
            aws_secret_access_key: 'S3RVER',
          }),
        ),
      })
      .execute();
    const session = {
      organizationId,
      channelId: 'chan1',
      connectionId: randomBytes(10).toString('hex'),
      eventWebhookUrl: `${hook.url}/events`,
    };
    const destination = { id: destinationId, bucket, prefix: 'rec', client: storage.s3 };
    await archive.add(session, destination, {
      path: 'c/0/seg0.ts',
      body: Buffer.from('segment'),
      fileType: 'ts',
    });

    const eventsOf = (type: string) =>
      hook.calls.map((call) => verified(secret, call)).filter((event) => event.type === type);
    const [failed] = await until('the failure event', async () => {
      const found = eventsOf('imageflux.archive_failed');
      return found.length > 0 ? found : undefined;
    });
    expect(failed).toMatchObject({
      channel_id: 'chan1',
      data: {
        dest_uri: `s3://${bucket}/rec/c/0/seg0.ts`,
        file_path: 'rec/c/0/seg0.ts',
        size: 7,
        file_type: 'ts',
      },
    });
    expect((failed!.data as { reason: string }).reason).toMatch(/bucket/i);
    const dead = await until('the dead letter', async () => {
      const listed = await admin.call('admin.job_failed_list');
      return (listed.body.jobs as DeadLetter[]).find((job) => job.target === `s3://${bucket}`);
    });
    expect(dead).toMatchObject({ kind: 'archive-upload', attempts: 2 });

    // The playlist's job, queued once the bucket exists, uploads the waiting segment before it.
    await storage.s3.send(new CreateBucketCommand({ Bucket: bucket }));
    await archive.add(session, destination, {
      path: 'c/0/index.m3u8',
      body: Buffer.from('#EXTM3U\n'),
      fileType: 'm3u8',
    });
    await until('both files announced', async () =>
      eventsOf('imageflux.archive_created').length === 2 ? true : undefined,
    );
    const created = eventsOf('imageflux.archive_created').map(
      (event) => (event.data as { file_path: string }).file_path,
    );
    expect(created.sort()).toEqual(['rec/c/0/index.m3u8', 'rec/c/0/seg0.ts']);
    const object = await storage.s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'rec/c/0/seg0.ts' }));
    expect(await object.Body!.transformToString()).toBe('segment');
    // The dead letter's own retry finds its file gone: nothing is uploaded or announced twice.
    expect((await admin.call('admin.job_retry', { kind: 'archive-upload', jobID: dead.jobID })).status).toBe(
      200,
    );
    await until('the retried job done', async () => {
      const listed = await admin.call('admin.job_failed_list');
      return (listed.body.jobs as DeadLetter[]).some((job) => job.jobID === dead.jobID) ? undefined : true;
    });
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(eventsOf('imageflux.archive_created')).toHaveLength(2);
    const waiting = await server.deps.db
      .selectFrom('archive_uploads')
      .select('id')
      .where('connection_id', '=', session.connectionId)
      .execute();
    expect(waiting).toEqual([]);
  });
});
