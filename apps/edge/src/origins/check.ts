import type { OriginCheckOutcome, OriginCheckResult } from '@ukiyo/contract';
import { OriginError, type OriginProbe } from './errors.ts';
import { HttpFetcher, RedirectError } from './http.ts';
import { S3Fetcher } from './s3.ts';
import type { OriginSource } from './source.ts';

export { originSource } from './source.ts';

export interface OriginCheckLimits {
  /** ALLOW_PRIVATE_ORIGINS: as for the edge's own fetches. */
  allowPrivate: boolean;
  timeoutMs: number;
  /** Body bytes read at most: enough to count a small image, never a whole large one. */
  maxBytes: number;
}

/** Node's and OpenSSL's codes for a handshake or certificate failure. */
const TLS_CODES = new Set([
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'CERT_UNTRUSTED',
  'CERT_REVOKED',
  'EPROTO',
]);
const DNS_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'ENODATA']);

/** The error codes along the chain of causes (the fetchers wrap Node's errors). */
function codesOf(error: unknown): string[] {
  const codes: string[] = [];
  for (let current = error, depth = 0; current instanceof Error && depth < 5; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') codes.push(code);
    current = current.cause;
  }
  return codes;
}

/** A failed fetch as an outcome: the fetchers' kinds first, then the network's codes. */
export function failureOutcome(error: unknown): OriginCheckOutcome {
  if (error instanceof RedirectError) return 'redirectFailed';
  if (error instanceof OriginError) {
    if (error.kind === 'forbidden') return 'privateAddress';
    if (error.kind === 'timeout') return 'timeout';
  }
  const codes = codesOf(error);
  if (codes.some((code) => DNS_CODES.has(code))) return 'dnsFailure';
  if (codes.some((code) => TLS_CODES.has(code) || code.startsWith('ERR_TLS_') || code.startsWith('ERR_SSL_')))
    return 'tlsError';
  return 'connectionFailed';
}

/** An answer as an outcome: 2xx is fine, the rest is the origin saying no. */
export function statusOutcome(status: number): OriginCheckOutcome {
  if (status >= 200 && status < 300) return 'ok';
  if (status === 401 || status === 403) return 'forbidden';
  if (status === 404 || status === 410) return 'notFound';
  return 'httpError';
}

/**
 * Fetches `path` (decoded, leading slash) of an origin with the edge's own fetchers: the same
 * SSRF guard, redirects, Host rewriting and S3 signing, but one attempt with a short timeout and
 * a bounded read, and fetchers of its own that are closed afterwards (no sockets kept).
 */
export async function checkOrigin(
  source: OriginSource,
  path: string,
  limits: OriginCheckLimits,
): Promise<OriginCheckResult> {
  const started = performance.now();
  const fetcherLimits = { timeoutMs: limits.timeoutMs, maxBytes: limits.maxBytes };
  let fetcher: HttpFetcher | S3Fetcher;
  let probing: Promise<OriginProbe>;
  if (source.kind === 'http') {
    const http = new HttpFetcher(limits.allowPrivate, fetcherLimits);
    [fetcher, probing] = [http, http.probe(source.config, path, limits.maxBytes)];
  } else {
    const s3 = new S3Fetcher(limits.allowPrivate, fetcherLimits);
    [fetcher, probing] = [s3, s3.probe(source.config, path, limits.maxBytes)];
  }
  const result = (outcome: OriginCheckOutcome, probe: OriginProbe | null): OriginCheckResult => ({
    outcome,
    path,
    status: probe?.status ?? null,
    contentType: probe?.contentType ?? null,
    bytes: probe?.bytes ?? 0,
    truncated: probe?.truncated ?? false,
    elapsedMs: Math.round(performance.now() - started),
    reason: '',
  });
  try {
    const probe = await probing;
    return result(statusOutcome(probe.status), probe);
  } catch (error) {
    return result(failureOutcome(error), null);
  } finally {
    fetcher.close();
  }
}
