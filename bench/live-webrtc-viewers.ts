// The werift WHEP viewers of live-webrtc.ts, run in child processes of it (childMode): this
// file loads only what a viewer needs, not the server's stack beside the server it measures.
import { createInterface } from 'node:readline';
import { ProtectionProfileAeadAes128Gcm, RTCPeerConnection, useH264, useNACK, useOPUS, usePLI } from 'werift';
import { SINK_ADDRESS } from './viewer-sinks.ts';

/** A child's viewers: `count` of them, of the channel at `whepUrl`; sinks (viewer-sinks.ts) or not. */
export interface ViewersTask {
  whepUrl: string;
  count: number;
  sinks?: boolean;
}

/** The SRTP authentication tag's length (bytes) under the DTLS transport's profile. */
function tagLength(pc: RTCPeerConnection): number {
  const session = pc.dtlsTransports[0]!.srtp as unknown as { config: { profile: number } };
  return session.config.profile === ProtectionProfileAeadAes128Gcm ? 16 : 10;
}

/** The private part of werift's ICE connection this bench reads: the event its data goes through. */
interface IceData {
  onData: { execute(data: Buffer): void };
}

/**
 * `count` werift WHEP viewers, opened a few at a time; prints `{connected, sinkPorts}` once all
 * are (sinks: their sockets' ports), counts from the parent's `start`, and on its `report`
 * prints each viewer's RTP bytes received since, and the SRTP tag's length. Sinks count nothing:
 * the kernel drops their media before it reaches them (the parent counts it there).
 *
 * Once a viewer's connection is up, the SRTP packets its ICE connection receives are counted
 * (their RTP header and payload: the length less the authentication tag) and dropped
 * undecrypted; DTLS and SRTCP go on to werift, and STUN (the server's consent checks) never
 * leaves ICE. Counted where every candidate pair's data meets (the connection's onData), not at
 * one pair's socket: the pair the viewer nominated need not be the one the server sends on. So a
 * viewer costs about a socket read per packet, not the AES that would make the viewers saturate
 * the machine before the server. What such a viewer does not send: receiver reports (the server
 * then never sees loss above its congestion threshold), NACKs and PLIs (it detects no loss).
 */
async function runViewers({ whepUrl, count, sinks }: ViewersTask) {
  const received = Array.from({ length: sinks ? 0 : count }, () => 0);
  let tag = 0;
  const sinkPorts: number[] = [];
  const peers: RTCPeerConnection[] = [];
  const open = async (index: number) => {
    const pc = new RTCPeerConnection({
      codecs: { video: [useH264({ rtcpFeedback: [useNACK(), usePLI()] })], audio: [useOPUS()] },
      iceAdditionalHostAddresses: [sinks ? SINK_ADDRESS : '127.0.0.1'],
      // A sink's sockets on its address only (and no IPv6 candidate the server might choose
      // instead), where the kernel's rule finds its media.
      iceInterfaceAddresses: sinks ? { udp4: SINK_ADDRESS } : undefined,
      iceUseIpv6: !sinks,
      bundlePolicy: 'max-bundle',
    });
    peers.push(pc);
    pc.addTransceiver('video', { direction: 'recvonly' });
    pc.addTransceiver('audio', { direction: 'recvonly' });
    await pc.setLocalDescription(await pc.createOffer());
    const offer = () =>
      fetch(whepUrl, {
        method: 'POST',
        headers: { 'Content-Type': 'application/sdp' },
        body: pc.localDescription!.sdp,
      });
    let answer = await offer();
    // A server with no room now says when to come back (503, Retry-After): once, as a player would.
    if (answer.status === 503) {
      const seconds = Number(answer.headers.get('retry-after') ?? 0);
      await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
      answer = await offer();
    }
    if (answer.status !== 201) return false;
    await pc.setRemoteDescription({ type: 'answer', sdp: await answer.text() });
    await pc.connectionStateChange.watch((state) => state === 'connected', 20_000);
    tag = tagLength(pc);
    const ice = pc.dtlsTransports[0]!.iceTransport.connection;
    if (sinks) {
      sinkPorts.push(...ice.localCandidates.map((candidate) => candidate.port));
      return true;
    }
    const data = (ice as unknown as IceData).onData;
    const passOn = data.execute.bind(data);
    data.execute = (packet) => {
      // RTP (RFC 7983: first byte 128 to 191) but not RTCP (payload types 192 to 223, RFC 5761).
      if (packet[0]! >> 6 === 2 && (packet[1]! < 192 || packet[1]! > 223))
        received[index]! += packet.length - tag;
      else passOn(packet);
    };
    return true;
  };
  let connected = 0;
  for (let start = 0; start < count; start += 10) {
    const batch = Array.from({ length: Math.min(10, count - start) }, (_, offset) =>
      open(start + offset).catch(() => false),
    );
    connected += (await Promise.all(batch)).filter(Boolean).length;
  }
  // Every viewer starts at the publisher's next keyframe (every 2 s).
  await new Promise((resolve) => setTimeout(resolve, 3_000));
  process.stdout.write(`${JSON.stringify({ connected, sinkPorts })}\n`);
  const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
  await lines.next(); // start
  received.fill(0);
  const cpuBefore = process.cpuUsage();
  await lines.next(); // report
  const cpu = process.cpuUsage(cpuBefore);
  process.stdout.write(`${JSON.stringify({ received, tag, cpuMs: (cpu.user + cpu.system) / 1e3 })}\n`);
  await Promise.all(peers.map((pc) => pc.close()));
  process.exit(0);
}

await runViewers(JSON.parse(process.argv[2]!) as ViewersTask);
