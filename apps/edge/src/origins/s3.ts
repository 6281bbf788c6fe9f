import type { S3Client } from '@aws-sdk/client-s3';
import type { Readable } from 'node:stream';
import {
  OriginError,
  readLimited,
  validatorsOf,
  type FetchedImage,
  type OriginLimits,
  type OriginProbe,
  type OriginValidators,
  type Unchanged,
} from './errors.ts';
import { s3Sdk } from './s3-sdk.ts';
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

  /**
   * `path`: decoded, with leading slash, inside the origin (pathPrefix is added here).
   * `ifChanged`: the version the edge holds; the bucket may answer that it is unchanged.
   */
  async fetch(
    config: S3OriginConfig,
    path: string,
    ifChanged?: OriginValidators,
  ): Promise<FetchedImage | Unchanged> {
    const signal = AbortSignal.timeout(this.limits.timeoutMs);
    try {
      const output = await this.getObject(config, path, signal, ifChanged);
      if ((output.ContentLength ?? 0) > this.limits.maxBytes)
        throw new OriginError('too-large', `origin image exceeds ${this.limits.maxBytes} bytes`);
      const data = await readLimited(
        output.Body as Readable,
        this.limits.maxBytes,
        'origin image',
        output.ContentLength,
      );
      return {
        data,
        cacheControl: output.CacheControl ?? null,
        expires: output.ExpiresString ?? null,
        ...validatorsOf(output.ETag, output.LastModified?.toUTCString()),
      };
    } catch (error) {
      const { S3ServiceException } = await s3Sdk();
      if (error instanceof S3ServiceException && !signal.aborted) {
        const status = error.$metadata.httpStatusCode;
        // The SDK reads no headers from a 304: the copy's stored ones stand.
        if (status === 304 && ifChanged) return { unchanged: true, cacheControl: null, expires: null };
        if (error.name === 'NoSuchKey' || status === 404)
          throw new OriginError('not-found', 'no such object in the bucket');
        throw new OriginError('failed', `S3 answered ${status ?? ''} ${error.name}`.trim(), { cause: error });
      }
      throw originError(error, signal);
    }
  }

  /**
   * What the bucket answers to one GET of `path`, whatever its status (origin.check): the body
   * is read up to `maxBytes` only, to count it, and then dropped. The bucket's root names no
   * object: there the bucket itself is asked for (HeadBucket).
   */
  async probe(config: S3OriginConfig, path: string, maxBytes: number): Promise<OriginProbe> {
    const signal = AbortSignal.timeout(this.limits.timeoutMs);
    try {
      if (this.keyOf(config, path) === '') {
        if (config.endPoint) checkLiteralHost(new URL(config.endPoint).hostname, this.allowPrivate);
        const { HeadBucketCommand } = await s3Sdk();
        const client = await this.client(config);
        await client.send(new HeadBucketCommand({ Bucket: config.bucket }), { abortSignal: signal });
        return { status: 200, contentType: null, bytes: 0, truncated: false };
      }
      const output = await this.getObject(config, path, signal);
      const body = output.Body as Readable;
      let bytes = 0;
      try {
        for await (const chunk of body as AsyncIterable<Uint8Array>) {
          bytes += chunk.length;
          if (bytes >= maxBytes) break;
        }
      } finally {
        body.destroy();
      }
      return {
        status: 200,
        contentType: output.ContentType ?? null,
        bytes: Math.min(bytes, maxBytes),
        truncated: bytes >= maxBytes,
      };
    } catch (error) {
      const { S3ServiceException } = await s3Sdk();
      // The service's refusal is its answer (403 AccessDenied, 404 NoSuchKey or NoSuchBucket).
      if (error instanceof S3ServiceException && !signal.aborted && error.$metadata.httpStatusCode)
        return { status: error.$metadata.httpStatusCode, contentType: null, bytes: 0, truncated: false };
      throw originError(error, signal);
    }
  }

  private keyOf(config: S3OriginConfig, path: string): string {
    const prefix = config.pathPrefix.replace(/\/+$/, '');
    return prefix ? `${prefix}${path}` : path.slice(1);
  }

  private async getObject(
    config: S3OriginConfig,
    path: string,
    signal: AbortSignal,
    ifChanged: OriginValidators = {},
  ) {
    if (config.endPoint) checkLiteralHost(new URL(config.endPoint).hostname, this.allowPrivate);
    const { GetObjectCommand } = await s3Sdk();
    const client = await this.client(config);
    const { etag, lastModified } = ifChanged;
    return client.send(
      new GetObjectCommand({
        Bucket: config.bucket,
        Key: this.keyOf(config, path),
        // The ETag when there is one (http.ts conditionOf says why not both).
        ...(etag ? { IfNoneMatch: etag } : lastModified ? { IfModifiedSince: new Date(lastModified) } : {}),
      }),
      { abortSignal: signal },
    );
  }

  close(): void {
    for (const client of this.clients.values()) client.destroy();
    this.clients.clear();
    this.agents.http.destroy();
    this.agents.https.destroy();
  }

  private async client(config: S3OriginConfig): Promise<S3Client> {
    const { S3Client } = await s3Sdk();
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

/** Any other failure of an S3 call as the edge reports it: the guard's refusal, a timeout, the network. */
function originError(error: unknown, signal: AbortSignal): OriginError {
  if (error instanceof OriginError) return error;
  const cause = (error as { cause?: unknown }).cause;
  if (cause instanceof OriginError) return cause;
  if (signal.aborted) return new OriginError('timeout', 'origin did not answer in time');
  return new OriginError(
    'failed',
    `S3 unreachable: ${error instanceof Error ? error.message : String(error)}`,
    {
      cause: error,
    },
  );
}
