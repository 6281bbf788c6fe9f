// Signed URLs (version 1): "1." + base64url, padding kept, of HMAC-SHA256 over the request
// path without its `sig` parameter. Compatible with go-imageflux.

import { createHmac, timingSafeEqual } from 'node:crypto';
import { locateParams, type LocatedParams } from './grammar';

const VERSION = '1.';

/**
 * The path a signature covers: the request path exactly as sent (prefix included) with the
 * `sig` parameter and its separator removed; just the image path when nothing else remains.
 * A path whose parameters do not parse is returned unchanged (it cannot verify anyway).
 */
export function signedPathOf(rawPath: string): string {
  const located = locate(rawPath);
  if (!located) return rawPath;
  const kept = located.tokens
    .filter((token) => token.key !== 'sig')
    .map((token) => rawPath.slice(token.start, token.end))
    .join('');
  if (!kept) return located.imagePath;
  return rawPath.slice(0, located.start) + kept.replace(/(?:,|%2[Cc])$/, '') + located.imagePath;
}

export function sign(secret: string, signedPath: string): string {
  const mac = createHmac('sha256', secret).update(signedPath).digest('base64');
  return VERSION + mac.replaceAll('+', '-').replaceAll('/', '_');
}

/** Checks the `sig` parameter and/or the X-ImageFlux-Signature header; either may carry it. */
export function verifySignature(secret: string, rawPath: string, headerSignature?: string | null): boolean {
  const located = locate(rawPath);
  const param = located?.tokens.find((token) => token.key === 'sig')?.value;
  const expected = Buffer.from(sign(secret, signedPathOf(rawPath)));
  return [param && decodeSignature(param), headerSignature].some((candidate) => {
    if (typeof candidate !== 'string' || !candidate.startsWith(VERSION)) return false;
    const given = Buffer.from(candidate);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

/**
 * The path with a `sig` parameter added in front of the others (an existing one is
 * replaced). Without other parameters the `c/` form is used, as go-imageflux does.
 */
export function signPath(secret: string, path: string): string {
  const unsigned = signedPathOf(path);
  const sig = `sig=${sign(secret, unsigned)}`;
  const located = locate(unsigned);
  if (!located) return `/c/${sig}${unsigned}`;
  return `${unsigned.slice(0, located.start)}${sig},${unsigned.slice(located.start)}`;
}

function locate(path: string): LocatedParams | null {
  try {
    return locateParams(path);
  } catch {
    return null;
  }
}

function decodeSignature(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}
