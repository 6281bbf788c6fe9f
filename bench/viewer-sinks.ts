// Viewer sinks for live-webrtc.ts: WebRTC viewers whose media the kernel drops as the server
// sends it, so that a step of viewers costs the machine the server's sending and not the
// viewers' receiving.
//
// On loopback a UDP send also runs the receiver's side of the kernel (the packet is delivered
// into the viewer's socket in the sender's own system call) and wakes a viewer process that
// reads it: 200 viewers on a 2-core machine cost their clients as much as the server. A sink
// (SINK_ADDRESS) completes ICE and DTLS as any viewer and answers the server's consent checks;
// an nftables rule on the output hook drops the RTP and RTCP sent to it once the server's UDP
// send has built the packet (its system call, routing, the copy into a socket buffer), before it
// would reach the loopback device. What a sink leaves out is what a real network card's driver
// and the viewer's own machine do. Each sink's RTP is counted per destination port (one per
// sink: the port of the candidate pair the server sends on), so that sinks keep up or not one
// by one as the counting viewers do.
import { execFileSync } from 'node:child_process';

/** The address a sink's ICE binds, whose RTP and RTCP the rule drops. */
export const SINK_ADDRESS = '127.0.0.3';
const TABLE = 'ukiyo_bench_sinks';
/** An IPv4 and UDP header: the rule counts whole IP packets. */
const IP_UDP_HEADERS = 28;

/** RTP bytes (headers and payload, not the SRTP tag) the server sent each sink's port. */
export interface SinkCounts {
  /** Forgets what was counted so far. */
  reset(): void;
  /** Per port: what was sent to it since the last reset, less `tagLength` per packet. */
  read(tagLength: number): Map<number, number>;
  close(): void;
}

function nft(args: string[], input?: string): string {
  return execFileSync('nft', args, { input, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] });
}

/** The sinks' rule in place, or why it cannot be (nftables missing, or not root). */
export function dropSinkMedia(): SinkCounts | string {
  try {
    // A run that crashed may have left its table.
    nft(['-f', '-'], `table ip ${TABLE}\ndelete table ip ${TABLE}\n`);
    // RTP and RTCP (RFC 7983: first byte 128 to 191), RTCP (payload types 192 to 223, RFC 5761)
    // dropped uncounted; STUN and DTLS pass.
    nft(
      ['-f', '-'],
      `table ip ${TABLE} {
        set sent { type inet_service; flags dynamic; counter; }
        chain out {
          type filter hook output priority 0; policy accept;
          ip daddr ${SINK_ADDRESS} meta l4proto udp @th,64,2 2 @th,72,8 192-223 drop
          ip daddr ${SINK_ADDRESS} meta l4proto udp @th,64,2 2 add @sent { udp dport } drop
        }
      }`,
    );
  } catch (error) {
    return error instanceof Error ? error.message.split('\n')[0]! : String(error);
  }
  return {
    reset: () => nft(['flush', 'set', 'ip', TABLE, 'sent']),
    read: (tagLength) => {
      const listing = JSON.parse(nft(['-j', 'list', 'set', 'ip', TABLE, 'sent'])) as {
        nftables: Array<{
          set?: { elem?: Array<{ elem: { val: number; counter: { packets: number; bytes: number } } }> };
        }>;
      };
      const elements = listing.nftables.flatMap((entry) => entry.set?.elem ?? []);
      return new Map(
        elements.map(({ elem: { val, counter } }) => [
          val,
          counter.bytes - counter.packets * (IP_UDP_HEADERS + tagLength),
        ]),
      );
    },
    close: () => nft(['delete', 'table', 'ip', TABLE]),
  };
}
