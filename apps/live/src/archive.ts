import { checkLiteralHost } from '@ukiyo/edge';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { Agent as HttpAgent } from 'node:http';
import type { Agent as HttpsAgent } from 'node:https';
import type { Job, JobQueue } from '@ukiyo/server';
import { sql } from 'kysely';
import type { Db, SecretBox } from './types.ts';
import type { Webhooks } from './webhooks.ts';

/** What CreateArchiveDestination keeps sealed besides the bucket URI. */
export interface DestinationSecrets {
  aws_end_point: string;
  aws_region: string;
  aws_access_key_id: string;
  aws_secret_access_key: string;
}

export interface Destination {
  id: string;
  bucket: string;
  /** Without leading or trailing slash; may be ''. */
  prefix: string;
  client: S3Client;
}

export function parseBucketUri(uri: string): { bucket: string; prefix: string } {
  const match = /^s3:\/\/([^/]+)\/?(.*)$/.exec(uri);
  if (!match) throw new Error(`not an s3:// URI: ${uri}`);
  return { bucket: match[1]!, prefix: match[2]!.replace(/^\/+|\/+$/g, '') };
}

export async function loadDestination(
  db: Db,
  secrets: SecretBox,
  agents: { http: HttpAgent; https: HttpsAgent },
  allowPrivate: boolean,
  organizationId: number,
  id: string,
): Promise<Destination | undefined> {
  const row = await db
    .selectFrom('archive_destinations')
    .select(['id', 'bucket_uri', 'config_enc'])
    .where('id', '=', id)
    .where('organization_id', '=', organizationId)
    .executeTakeFirst();
  if (!row) return undefined;
  const config = JSON.parse(secrets.open(row.config_enc)) as DestinationSecrets;
  // Node connects to an address literal without a lookup, so the agents' guard never sees it.
  if (config.aws_end_point) checkLiteralHost(new URL(config.aws_end_point).hostname, allowPrivate);
  const client = new S3Client({
    region: config.aws_region || 'us-east-1',
    ...(config.aws_end_point ? { endpoint: config.aws_end_point, forcePathStyle: true } : {}),
    // Always the customer's keys: never the credentials of the host the live server runs on.
    credentials: { accessKeyId: config.aws_access_key_id, secretAccessKey: config.aws_secret_access_key },
    requestHandler: {
      httpAgent: agents.http,
      httpsAgent: agents.https,
      connectionTimeout: 10_000,
      requestTimeout: 30_000,
    },
    maxAttempts: 1,
  });
  return { id: row.id, ...parseBucketUri(row.bucket_uri), client };
}

export interface ArchiveFile {
  /** Object key under the destination's prefix. */
  path: string;
  body: Buffer;
  fileType: 'ts' | 'm3u8';
}

/** The publisher session a file comes from: its files go up in order, its events name it. */
export interface ArchiveSession {
  organizationId: number;
  channelId: string;
  connectionId: string;
  eventWebhookUrl: string;
}

/** An `archive-upload` job: the session's files up to `uploadId` (an `archive_uploads` row). */
interface ArchiveJob {
  uploadId: number;
  organizationId: number;
  channelId: string;
  connectionId: string;
  eventWebhookUrl: string;
  /** `s3://{bucket}`, the start of each file's dest_uri. */
  target: string;
}

/**
 * Archived files as `archive-upload` jobs: each file waits in `archive_uploads` (ffmpeg deletes
 * old segments, and the process may be killed) until one of the session's jobs has put it in the
 * bucket. A job uploads every file of its session up to its own in order, so a playlist never
 * lands before the segments it names, even when an earlier file is waiting for a retry. Whoever
 * deletes a file's row queues its `imageflux.archive_created` event in the same transaction, so
 * the event is sent once however many jobs or processes uploaded the file; a job failing its
 * last attempt sends `imageflux.archive_failed` for its file.
 */
export class Archive {
  constructor(
    private readonly deps: { db: Db; secrets: SecretBox; jobs: JobQueue },
    private readonly webhooks: Webhooks,
    private readonly agents: { http: HttpAgent; https: HttpsAgent },
    private readonly allowPrivate: boolean,
  ) {}

  async add(session: ArchiveSession, destination: Destination, file: ArchiveFile): Promise<void> {
    await this.deps.db.transaction().execute(async (trx) => {
      const row = await trx
        .insertInto('archive_uploads')
        .values({
          organization_id: session.organizationId,
          destination_id: destination.id,
          connection_id: session.connectionId,
          object_key: destination.prefix ? `${destination.prefix}/${file.path}` : file.path,
          file_type: file.fileType,
          body: file.body,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      await this.deps.jobs.send<ArchiveJob>(
        'archive-upload',
        { ...session, uploadId: row.id, target: `s3://${destination.bucket}` },
        trx,
      );
    });
  }

  /** Uploads queued files from this process; resolves to a function that stops it. */
  work(concurrency: number): Promise<() => Promise<void>> {
    return this.deps.jobs.work<ArchiveJob>('archive-upload', concurrency, (job) => this.upload(job));
  }

  private async upload({ data, lastAttempt }: Job<ArchiveJob>): Promise<void> {
    const files = await this.deps.db
      .selectFrom('archive_uploads')
      .select(['id', 'destination_id', 'object_key', 'file_type'])
      .where('connection_id', '=', data.connectionId)
      .where('id', '<=', data.uploadId)
      .orderBy('id')
      .execute();
    const destinations = new Map<string, Destination>();
    for (const file of files) {
      try {
        const destination =
          destinations.get(file.destination_id) ??
          (await loadDestination(
            this.deps.db,
            this.deps.secrets,
            this.agents,
            this.allowPrivate,
            data.organizationId,
            file.destination_id,
          ));
        if (!destination) throw new Error('the archive destination no longer exists');
        destinations.set(file.destination_id, destination);
        await this.put(destination, data, file);
      } catch (error) {
        if (lastAttempt) await this.failed(data, error);
        throw error;
      }
    }
  }

  private async put(
    destination: Destination,
    job: ArchiveJob,
    file: { id: number; object_key: string; file_type: 'ts' | 'm3u8' },
  ): Promise<void> {
    // Read one at a time: a session whose bucket was away may have many files waiting.
    const stored = await this.deps.db
      .selectFrom('archive_uploads')
      .select('body')
      .where('id', '=', file.id)
      .executeTakeFirst();
    if (!stored) return;
    await destination.client.send(
      new PutObjectCommand({
        Bucket: destination.bucket,
        Key: file.object_key,
        Body: stored.body,
        ContentType: file.file_type === 'ts' ? 'video/mp2t' : 'application/vnd.apple.mpegurl',
      }),
    );
    await this.deps.db.transaction().execute(async (trx) => {
      const deleted = await trx
        .deleteFrom('archive_uploads')
        .where('id', '=', file.id)
        .returning('id')
        .executeTakeFirst();
      if (!deleted) return;
      await this.announce(job, 'imageflux.archive_created', { ...file, size: stored.body.length }, {}, trx);
    });
  }

  /** The job's own file will not be archived: its event, once, at the last attempt. */
  private async failed(job: ArchiveJob, error: unknown): Promise<void> {
    const file = await this.deps.db
      .selectFrom('archive_uploads')
      .select(['object_key', 'file_type', sql<number>`length(body)`.as('size')])
      .where('id', '=', job.uploadId)
      .executeTakeFirst();
    if (!file) return;
    await this.announce(job, 'imageflux.archive_failed', file, {
      reason: error instanceof Error ? error.message : String(error),
    });
  }

  /** A file's event to the channel's event webhook, in `trx` when given. */
  private announce(
    job: ArchiveJob,
    type: 'imageflux.archive_created' | 'imageflux.archive_failed',
    file: { object_key: string; file_type: string; size: number },
    extra: Record<string, string>,
    trx?: Parameters<Webhooks['event']>[3],
  ): Promise<void> {
    const data = {
      dest_uri: `${job.target}/${file.object_key}`,
      file_path: file.object_key,
      size: file.size,
      file_type: file.file_type,
      ...extra,
    };
    const payload = { channel_id: job.channelId, type, timestamp: new Date().toISOString(), data };
    return this.webhooks.event(job.organizationId, job.eventWebhookUrl, payload, trx);
  }
}
