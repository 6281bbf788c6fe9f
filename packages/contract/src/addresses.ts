import ipaddr from 'ipaddr.js';

/**
 * The one classification of network addresses customers may make us connect to (origins,
 * S3 endpoints, webhooks, archive buckets): pure, so the console server checks at save time
 * with the same rule the edge and live apply when they connect. A subpath export
 * (`@ukiyo/contract/addresses`) keeps ipaddr.js out of the console's bundle.
 */

/**
 * Only globally routable unicast addresses: loopback, private, link-local (cloud metadata at
 * 169.254.169.254), unique-local, CGNAT, multicast, unspecified and the IPv6 translation and
 * tunnelling ranges that can embed a private IPv4 address (mapped, 6to4, Teredo, NAT64) are all
 * refused.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  return ipaddr.process(address).range() === 'unicast';
}

/** The address a URL's hostname spells (`[::1]` gives `::1`), or null when it is a DNS name. */
export function addressLiteral(hostname: string): string | null {
  const bare = hostname.replace(/^\[(.*)\]$/, '$1');
  return ipaddr.isValid(bare) ? bare : null;
}
