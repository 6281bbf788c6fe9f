import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Context } from 'hono';
import type { LiveEnv } from '../api.ts';

/**
 * Marks what a live process passes on to the one holding a channel (peerOf): a WHEP request, a
 * Sora viewer's signaling, an HLS request (whose value is then its signature, see hls.ts). The
 * holder answers it alone, never passing it on again.
 */
export const PEER_HEADER = 'x-ukiyo-live-peer';

/**
 * How far a signature's time may be from the checking process's clock, seconds: the fleet's
 * clocks' drift (its machines keep time by NTP) and a request's transit. A signature replayed
 * later than this is refused.
 */
export const PEER_SIGNATURE_SECONDS = 30;

/**
 * Signs and checks the requests live processes pass on to each other: PEER_HEADER holds the
 * time and the request's path and query (or a report's body) signed with the fleet's key, as
 * `{unix seconds}.{HMAC-SHA256}`, so that a viewer cannot pass for a peer, and what someone on
 * the fleet's network saw go by cannot be sent again past PEER_SIGNATURE_SECONDS. A peer's HLS
 * request is answered from local files only, neither admitted nor counted here (the peer did
 * both).
 */
export class PeerSignature {
  constructor(private readonly key: Buffer) {}

  sign(target: string, now = Date.now()): string {
    const seconds = Math.floor(now / 1000).toString();
    return `${seconds}.${this.mac(seconds, target)}`;
  }

  verify(target: string, signature: string | undefined, now = Date.now()): boolean {
    const [, seconds, mac] = /^([0-9]{1,12})\.([A-Za-z0-9_-]+)$/.exec(signature ?? '') ?? [];
    if (!seconds || !mac) return false;
    if (Math.abs(Number(seconds) - now / 1000) > PEER_SIGNATURE_SECONDS) return false;
    const expected = Buffer.from(this.mac(seconds, target));
    const given = Buffer.from(mac);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  /** Whether a request came from another process of the fleet: its path and query signed. */
  signedRequest(c: Context<LiveEnv>): boolean {
    const signature = c.req.header(PEER_HEADER);
    return signature !== undefined && this.verify(`${c.req.path}${new URL(c.req.url).search}`, signature);
  }

  private mac(seconds: string, target: string): string {
    return createHmac('sha256', this.key).update(`${seconds}.${target}`).digest('base64url');
  }
}
