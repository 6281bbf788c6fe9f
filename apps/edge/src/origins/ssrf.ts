import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { OriginError } from './errors.ts';

/**
 * Only globally routable unicast addresses: loopback, private, link-local (cloud metadata at
 * 169.254.169.254), unique-local, CGNAT, multicast and the IPv6 tunnelling ranges that can
 * embed a private IPv4 address are all refused.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  return ipaddr.process(address).range() === 'unicast';
}

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
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  if (!allowPrivate && ipaddr.isValid(bare) && !isPublicAddress(bare)) throw refuseAddress(host, bare);
}

export function guardedAgents(allowPrivate: boolean): { http: HttpAgent; https: HttpsAgent } {
  const lookup = guardedLookup(allowPrivate);
  return {
    http: new HttpAgent({ keepAlive: true, lookup, maxSockets: 64 }),
    https: new HttpsAgent({ keepAlive: true, lookup, maxSockets: 64 }),
  };
}
