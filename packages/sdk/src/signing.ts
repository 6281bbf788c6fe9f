import { signPath } from '@ukiyo/imaging/signing';

/**
 * An image URL (or a path) of an origin with signed URLs, with its `sig` parameter added as
 * the edge checks it (delivery-url.md section 4): the edge's own signing code, so the two
 * cannot disagree. An existing `sig` is replaced.
 */
export function signUrl(secret: string, url: string): string {
  if (url.startsWith('/')) return signPath(secret, url);
  const parsed = new URL(url);
  return `${parsed.origin}${signPath(secret, parsed.pathname)}${parsed.search}`;
}
