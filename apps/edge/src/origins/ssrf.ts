import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { LookupFunction } from 'node:net';
import { addressLiteral, isPublicAddress } from '@ukiyo/contract/addresses';
import { OriginError } from './errors.ts';

export function refuseAddress(host: string, address: string): OriginError {
  return new OriginError('forbidden', `origin address ${address} of ${host} is not allowed`);
}

/**
 * A DNS lookup that refuses non-public answers, so the check holds for the address actually
 * connected to (no rebinding between check and connect), on every redirect and retry.
 */
export function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, '', 0);
      if (!allowPrivate) {
        const refused = addresses.find((entry) => !isPublicAddress(entry.address));
        if (refused) return callback(refuseAddress(hostname, refused.address), '', 0);
      }
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      const first = addresses[0];
      if (!first) return callback(new Error(`no address for ${hostname}`), '', 0);
      callback(null, first.address, first.family);
    });
  };
}

/** Node skips the lookup for IP literals, so those are checked before connecting. */
export function checkLiteralHost(host: string, allowPrivate: boolean): void {
  const literal = addressLiteral(host);
  if (!allowPrivate && literal !== null && !isPublicAddress(literal)) throw refuseAddress(host, literal);
}

export function guardedAgents(allowPrivate: boolean): { http: HttpAgent; https: HttpsAgent } {
  const lookup = guardedLookup(allowPrivate);
  return {
    http: new HttpAgent({ keepAlive: true, lookup, maxSockets: 64 }),
    https: new HttpsAgent({ keepAlive: true, lookup, maxSockets: 64 }),
  };
}
