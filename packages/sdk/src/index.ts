import createClient, { type Client } from 'openapi-fetch';
import type { paths } from './schema.ts';

export type { components, operations, paths } from './schema.ts';
export { signUrl } from './signing.ts';

export interface UkiyoClientOptions {
  /** The console host, e.g. `https://console.example.com`. */
  baseUrl: string;
  /** An encoded API token (the console's /token/ screen, or `POST /api/v1/tokens`). */
  token: string;
  fetch?: typeof globalThis.fetch;
}

/**
 * A typed client of the console host's API (/api/v1 and the public cache calls), types
 * generated from its OpenAPI document: `client.GET('/api/v1/origins')`. The live API is on the
 * live host: make another client with that baseUrl for `POST /`.
 */
export function createUkiyoClient({ baseUrl, token, fetch }: UkiyoClientOptions): Client<paths> {
  return createClient<paths>({
    baseUrl: baseUrl.replace(/\/+$/, ''),
    headers: { Authorization: `Bearer ${token}` },
    ...(fetch ? { fetch } : {}),
  });
}
