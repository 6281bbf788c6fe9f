import { GetObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import type { Readable } from 'node:stream';
import { OriginError, readLimited, type FetchedImage, type OriginLimits } from './errors.ts';
import { checkLiteralHost, guardedAgents } from './ssrf.ts';

export interface S3OriginConfig {
  accessKeyID: string;
  secretAccessKey: string;
  /** Empty: AWS itself; else an S3-compatible service, addressed path-style. */
  endPoint: string;
  region: string;
  bucket: string;
  /** Without leading slash. */
  pathPrefix: string;
}

export class S3Fetcher {
  private readonly agents;
  /** One client per distinct configuration: clients keep connections and credentials. */
  private readonly clients = new Map<string, S3Client>();

  constructor(
    private readonly allowPrivate: boolean,
    private readonly limits: OriginLimits,
  ) {
    this.agents = guardedAgents(allowPrivate);
  }

  /** `path`: decoded, with leading slash, inside the origin (pathPrefix is added here). */
  async fetch(config: S3OriginConfig, path: string): Promise<FetchedImage> {
    const prefix = config.pathPrefix.replace(/\/+$/, '');
    const key = prefix ? `${prefix}${path}` : path.slice(1);
    if (config.endPoint) checkLiteralHost(new URL(config.endPoint).hostname, this.allowPrivate);
    const signal = AbortSignal.timeout(this.limits.timeoutMs);
    try {
      const output = await this.client(config).send(
        new GetObjectCommand({ Bucket: config.bucket, Key: key }),
        {
          abortSignal: signal,
        },
      );
      if ((output.ContentLength ?? 0) > this.limits.maxBytes)
        throw new OriginError('too-large', `origin image exceeds ${this.limits.maxBytes} bytes`);
      const data = await readLimited(output.Body as Readable, this.limits.maxBytes, 'origin image');
      return {
        data,
        cacheControl: output.CacheControl ?? null,
        expires: output.ExpiresString ?? null,
      };
    } catch (error) {
      if (error instanceof OriginError) throw error;
      const cause = (error as { cause?: unknown }).cause;
      if (cause instanceof OriginError) throw cause;
      if (signal.aborted) throw new OriginError('timeout', 'origin did not answer in time');
      if (error instanceof S3ServiceException) {
        const status = error.$metadata.httpStatusCode;
        if (error.name === 'NoSuchKey' || status === 404)
          throw new OriginError('not-found', 'no such object in the bucket');
        throw new OriginError('failed', `S3 answered ${status ?? ''} ${error.name}`.trim(), { cause: error });
      }
      throw new OriginError(
        'failed',
        `S3 unreachable: ${error instanceof Error ? error.message : String(error)}`,
        {
          cause: error,
        },
      );
    }
  }

  close(): void {
    for (const client of this.clients.values()) client.destroy();
    this.clients.clear();
    this.agents.http.destroy();
    this.agents.https.destroy();
  }

  private client(config: S3OriginConfig): S3Client {
    const id = JSON.stringify([config.accessKeyID, config.secretAccessKey, config.endPoint, config.region]);
    let client = this.clients.get(id);
    if (!client) {
      client = new S3Client({
        region: config.region || 'us-east-1',
        ...(config.endPoint ? { endpoint: config.endPoint, forcePathStyle: true } : {}),
        // Always the origin's own keys: never the credentials of the host the edge runs on.
        credentials: { accessKeyId: config.accessKeyID, secretAccessKey: config.secretAccessKey },
        requestHandler: {
          httpAgent: this.agents.http,
          httpsAgent: this.agents.https,
          connectionTimeout: this.limits.timeoutMs,
          requestTimeout: this.limits.timeoutMs,
        },
        maxAttempts: 2,
      });
      this.clients.set(id, client);
    }
    return client;
  }
}
