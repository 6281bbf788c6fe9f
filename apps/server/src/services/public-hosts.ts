import { lookup } from 'node:dns/promises';
import type { Invalids } from '@ukiyo/contract';
import { addressLiteral, isPublicAddress } from '@ukiyo/contract/addresses';
import { AppError } from '../http/app-error.ts';

/** How long a save waits for DNS before accepting the name (the connect-time guard still holds). */
const LOOKUP_TIMEOUT_MS = 2_000;

/**
 * Whether a host a customer names (an origin, an S3 endpoint, a webhook) may be saved: an
 * address literal must be public, and a name must not resolve to any non-public address. A name
 * that does not resolve, or not within LOOKUP_TIMEOUT_MS, is accepted: customers often save an
 * origin before its DNS exists, and the edge's and live's guarded lookups refuse private answers
 * on every connection anyway. `hostname` is a URL's hostname (IPv6 in brackets).
 */
export async function isPublicHost(hostname: string): Promise<boolean> {
  const literal = addressLiteral(hostname);
  if (literal !== null) return isPublicAddress(literal);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), LOOKUP_TIMEOUT_MS);
  });
  try {
    const answers = await Promise.race([lookup(hostname, { all: true }), timeout]);
    return (answers ?? []).every((answer) => isPublicAddress(answer.address));
  } catch {
    return true;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * `validation.privateAddress` for each field whose http(s) URL names a non-public host, unless
 * ALLOW_PRIVATE_ORIGINS is set. Empty or unparsable URLs are the schemas' business.
 */
export async function privateUrlInvalids(
  urls: Record<string, string>,
  allowPrivate: boolean,
): Promise<Invalids> {
  if (allowPrivate) return {};
  const checks = Object.entries(urls).map(async ([field, url]) => {
    const hostname = URL.canParse(url) ? new URL(url).hostname : '';
    return hostname !== '' && !(await isPublicHost(hostname)) ? [field] : [];
  });
  const refused = (await Promise.all(checks)).flat();
  return Object.fromEntries(refused.map((field) => [field, ['validation.privateAddress']]));
}

/** privateUrlInvalids as a refusal, for calls with nothing else left to check. */
export async function refusePrivateUrls(urls: Record<string, string>, allowPrivate: boolean): Promise<void> {
  const invalids = await privateUrlInvalids(urls, allowPrivate);
  if (Object.keys(invalids).length > 0) throw new AppError('validation error', { invalids });
}
