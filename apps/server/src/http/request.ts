import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context } from 'hono';
import type { Config } from '../config.ts';
import { addressOf } from './request-head.ts';

/** The client's address: the socket's, or the proxy's X-Forwarded-For when TRUST_PROXY is on. */
export function clientAddress(c: Context, config: Config): string {
  let remote: string | undefined;
  try {
    remote = getConnInfo(c).remote.address;
  } catch {
    remote = undefined;
  }
  return addressOf(c.req.header('x-forwarded-for'), remote, config);
}

export function isSecureRequest(c: Context, config: Config): boolean {
  if (config.PUBLIC_URL) return config.PUBLIC_URL.startsWith('https:');
  if (config.TRUST_PROXY && c.req.header('x-forwarded-proto') === 'https') return true;
  return new URL(c.req.url).protocol === 'https:';
}

/**
 * CSRF defence beside the X-Requested-With header (which already forces a CORS preflight that
 * is never granted): a browser's Origin must be this console's own, and Fetch Metadata must not
 * say the request came from another site.
 */
export function isSameOrigin(c: Context, config: Config): boolean {
  const site = c.req.header('sec-fetch-site');
  if (site && site !== 'same-origin' && site !== 'none') return false;
  const origin = c.req.header('origin');
  if (!origin) return true;
  if (config.PUBLIC_URL && origin === new URL(config.PUBLIC_URL).origin) return true;
  const host = c.req.header('host');
  const scheme = isSecureRequest(c, config) ? 'https' : 'http';
  return host !== undefined && origin === `${scheme}://${host}`;
}
