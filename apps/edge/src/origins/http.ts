import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import {
  OriginError,
  readLimited,
  validatorsOf,
  type FetchedImage,
  type OriginHeaders,
  type OriginLimits,
  type OriginProbe,
  type OriginValidators,
  type Unchanged,
} from './errors.ts';
import { fetchSample, isSampleHost, probeSample } from './samples.ts';
import { checkLiteralHost, guardedAgents } from './ssrf.ts';

export interface HttpOriginConfig {
  scheme: 'http' | 'https';
  host: string;
  /** Without leading slash. */
  pathPrefix: string;
  /** Host header sent to the origin; empty means `host`. */
  rewriteHost: string;
}

const MAX_REDIRECTS = 5;

/** Redirects the edge does not follow: a failure like any other, told apart by origin.check. */
export class RedirectError extends OriginError {
  constructor(message: string) {
    super('failed', message);
    this.name = 'RedirectError';
  }
}

/** Percent-encodes each segment of a decoded path, keeping the slashes. */
export function encodePath(path: string): string {
  return path
    .split('/')
    .map((segment) => encodeURIComponent(segment))
    .join('/');
}

export class HttpFetcher {
  private readonly agents;

  constructor(
    private readonly allowPrivate: boolean,
    private readonly limits: OriginLimits,
  ) {
    this.agents = guardedAgents(allowPrivate);
  }

  /**
   * `path`: decoded, with leading slash, inside the origin (pathPrefix is added here).
   * `ifChanged`: the version the edge holds; the origin may answer that it is unchanged.
   */
  async fetch(
    config: HttpOriginConfig,
    path: string,
    ifChanged?: OriginValidators,
  ): Promise<FetchedImage | Unchanged> {
    if (isSampleHost(config.host)) return fetchSample(path);
    const signal = AbortSignal.timeout(this.limits.timeoutMs);
    const response = await this.open(config, path, signal, ifChanged);
    const status = response.statusCode ?? 0;
    if (status === 304 && ifChanged) {
      response.resume();
      return { unchanged: true, ...headersOf(response) };
    }
    if (status === 404 || status === 410) {
      response.resume();
      throw new OriginError('not-found', `origin answered ${status}`);
    }
    if (status !== 200) {
      response.resume();
      throw new OriginError('failed', `origin answered ${status}`);
    }
    const length = Number(response.headers['content-length'] ?? 0);
    if (length > this.limits.maxBytes) {
      response.destroy();
      throw new OriginError('too-large', `origin image exceeds ${this.limits.maxBytes} bytes`);
    }
    const data = await readLimited(response, this.limits.maxBytes, 'origin image', length).catch(
      (error: unknown) => {
        throw signal.aborted ? timeoutError() : error instanceof OriginError ? error : failed(error);
      },
    );
    return { data, ...headersOf(response) };
  }

  /**
   * What the origin answers to one GET of `path`, whatever its status (origin.check): the body
   * is read up to `maxBytes` only, to count it, and then dropped.
   */
  async probe(config: HttpOriginConfig, path: string, maxBytes: number): Promise<OriginProbe> {
    if (isSampleHost(config.host)) return probeSample(path);
    const signal = AbortSignal.timeout(this.limits.timeoutMs);
    const response = await this.open(config, path, signal);
    let bytes = 0;
    try {
      for await (const chunk of response as AsyncIterable<Uint8Array>) {
        bytes += chunk.length;
        if (bytes >= maxBytes) break;
      }
    } catch (error) {
      throw signal.aborted ? timeoutError() : failed(error);
    } finally {
      response.destroy();
    }
    return {
      status: response.statusCode ?? 0,
      contentType: response.headers['content-type'] ?? null,
      bytes: Math.min(bytes, maxBytes),
      truncated: bytes >= maxBytes,
    };
  }

  /** The origin's answer to GET `path` once redirects are followed; the caller reads its body. */
  private async open(
    config: HttpOriginConfig,
    path: string,
    signal: AbortSignal,
    ifChanged?: OriginValidators,
  ): Promise<IncomingMessage> {
    const prefix = config.pathPrefix ? `/${config.pathPrefix.replace(/\/+$/, '')}` : '';
    let url = new URL(`${config.scheme}://${config.host}${encodePath(prefix + path)}`);
    let hostHeader: string | undefined = config.rewriteHost || undefined;
    for (let hop = 0; ; hop++) {
      const response = await this.get(url, hostHeader, signal, ifChanged);
      const status = response.statusCode ?? 0;
      const location = response.headers.location;
      if (status < 300 || status >= 400 || !location) return response;
      response.resume();
      if (hop >= MAX_REDIRECTS) throw new RedirectError('origin redirected too many times');
      const next = new URL(location, url);
      if (next.protocol !== 'http:' && next.protocol !== 'https:')
        throw new RedirectError(`origin redirected to ${next.protocol}`);
      // The rewritten Host belongs to the configured origin, not to where it redirects.
      if (next.host !== url.host) hostHeader = undefined;
      url = next;
    }
  }

  close(): void {
    this.agents.http.destroy();
    this.agents.https.destroy();
  }

  private get(
    url: URL,
    hostHeader: string | undefined,
    signal: AbortSignal,
    ifChanged: OriginValidators = {},
  ): Promise<IncomingMessage> {
    checkLiteralHost(url.hostname, this.allowPrivate);
    const https = url.protocol === 'https:';
    const send = https ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      const request = send(
        url,
        {
          agent: https ? this.agents.https : this.agents.http,
          headers: {
            accept: 'image/*,*/*;q=0.8',
            'user-agent': 'ukiyo-edge',
            ...(hostHeader ? { host: hostHeader } : {}),
            ...conditionOf(ifChanged),
          },
          signal,
          ...(https && hostHeader ? { servername: hostHeader.replace(/:\d+$/, '') } : {}),
        },
        resolve,
      );
      request.on('error', (error) => {
        if (error instanceof OriginError) reject(error);
        else if (signal.aborted) reject(timeoutError());
        else reject(failed(error));
      });
      request.end();
    });
  }
}

/**
 * The request headers asking for `version` only if it changed: the ETag when there is one, as
 * it tells apart versions a Last-Modified of whole seconds does not (and not both: some servers
 * answer 304 when either holds).
 */
function conditionOf(version: OriginValidators): Record<string, string> {
  if (version.etag) return { 'if-none-match': version.etag };
  return version.lastModified ? { 'if-modified-since': version.lastModified } : {};
}

function headersOf(response: IncomingMessage): OriginHeaders {
  const { headers } = response;
  return {
    cacheControl: headers['cache-control'] ?? null,
    expires: headers.expires ?? null,
    age: headers.age ?? null,
    date: headers.date ?? null,
    ...validatorsOf(headers.etag, headers['last-modified']),
  };
}

function timeoutError(): OriginError {
  return new OriginError('timeout', 'origin did not answer in time');
}

function failed(error: unknown): OriginError {
  return new OriginError(
    'failed',
    `origin unreachable: ${error instanceof Error ? error.message : String(error)}`,
    {
      cause: error,
    },
  );
}
