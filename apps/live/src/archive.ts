import { checkLiteralHost } from '@ukiyo/edge';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { Agent as HttpAgent } from 'node:http';
import type { Agent as HttpsAgent } from 'node:https';
import type { Logger } from 'pino';
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

/**
 * Uploads one session's archived files in order (a playlist never lands before the segment it
 * names), each retried with doubling delays; every outcome is an event webhook.
 */
export class ArchiveQueue {
  private tail: Promise<void> = Promise.resolve();

  constructor(
    private readonly channelId: string,
    private readonly eventWebhookUrl: string,
    private readonly webhooks: Webhooks,
    private readonly log: Logger,
    private readonly retry: { attempts: number; backoffMs: number },
  ) {}

  add(destination: Destination, file: ArchiveFile): void {
    this.tail = this.tail.then(() => this.upload(destination, file));
  }

  private async upload(destination: Destination, file: ArchiveFile): Promise<void> {
    const key = destination.prefix ? `${destination.prefix}/${file.path}` : file.path;
    const destUri = `s3://${destination.bucket}/${key}`;
    const data = { dest_uri: destUri, file_path: key, size: file.body.length, file_type: file.fileType };
    let lastError: unknown;
    for (let attempt = 1; attempt <= this.retry.attempts; attempt++) {
      try {
        await destination.client.send(
          new PutObjectCommand({
            Bucket: destination.bucket,
            Key: key,
            Body: file.body,
            ContentType: file.fileType === 'ts' ? 'video/mp2t' : 'application/vnd.apple.mpegurl',
          }),
        );
        this.webhooks.event(this.eventWebhookUrl, {
          channel_id: this.channelId,
          type: 'imageflux.archive_created',
          timestamp: new Date().toISOString(),
          data,
        });
        return;
      } catch (error) {
        lastError = error;
        if (attempt < this.retry.attempts) {
          await new Promise((resolve) => setTimeout(resolve, this.retry.backoffMs * 2 ** (attempt - 1)));
        }
      }
    }
    this.log.warn({ err: lastError, destUri }, 'archive upload failed');
    this.webhooks.event(this.eventWebhookUrl, {
      channel_id: this.channelId,
      type: 'imageflux.archive_failed',
      timestamp: new Date().toISOString(),
      data: { ...data, reason: lastError instanceof Error ? lastError.message : String(lastError) },
    });
  }

  /** Resolves when every file queued so far is uploaded or given up. */
  drain(): Promise<void> {
    return this.tail;
  }
}
