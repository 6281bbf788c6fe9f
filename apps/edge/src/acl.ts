import ipaddr from 'ipaddr.js';

export interface AclConfig {
  isAllowList: boolean;
  cidrs: readonly string[];
}

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** A compiled ACL: allow list (only these) or deny list (all but these). Empty deny list allows all. */
export class Acl {
  private constructor(
    private readonly isAllowList: boolean,
    private readonly ranges: Range[],
  ) {}

  /** Entries that do not parse were refused by the console; any left over are skipped. */
  static compile(config: AclConfig): Acl {
    const ranges: Range[] = [];
    for (const entry of config.cidrs) {
      try {
        if (entry.includes('/')) {
          const [address, bits] = ipaddr.parseCIDR(entry);
          ranges.push([
            normalise(address),
            address.kind() === 'ipv6' && normalise(address).kind() === 'ipv4' ? bits - 96 : bits,
          ]);
        } else {
          const address = ipaddr.process(entry);
          ranges.push([address, address.kind() === 'ipv4' ? 32 : 128]);
        }
      } catch {
        // unreachable for console-validated input
      }
    }
    return new Acl(config.isAllowList, ranges);
  }

  get empty(): boolean {
    return !this.isAllowList && this.ranges.length === 0;
  }

  allows(clientAddress: string): boolean {
    if (this.empty) return true;
    let address: ipaddr.IPv4 | ipaddr.IPv6;
    try {
      address = ipaddr.process(clientAddress);
    } catch {
      return !this.isAllowList;
    }
    const listed = this.ranges.some(
      ([network, bits]) => address.kind() === network.kind() && address.match(network, bits),
    );
    return this.isAllowList ? listed : !listed;
  }
}

/** IPv4-mapped IPv6 (::ffff:a.b.c.d, what dual-stack sockets report) compares as IPv4. */
function normalise(address: ipaddr.IPv4 | ipaddr.IPv6): ipaddr.IPv4 | ipaddr.IPv6 {
  return address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()
    ? (address as ipaddr.IPv6).toIPv4Address()
    : address;
}

/**
 * The client's address: the socket's, or behind a trusted proxy the last X-Forwarded-For
 * entry (the one the proxy itself appended; earlier ones are client-supplied).
 */
export function clientAddress(
  socketAddress: string | undefined,
  forwardedFor: string | string[] | undefined,
  trustProxy: boolean,
): string {
  if (trustProxy && forwardedFor) {
    const header = Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor;
    const last = header.split(',').at(-1)?.trim();
    if (last) return last;
  }
  return socketAddress ?? '';
}
