import { Counter, Histogram, Registry } from 'prom-client';
import { probeGauges } from '@ukiyo/server/process';

const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1];

/**
 * HLS viewers: HLS has no connections, so a viewer is a client (address and user agent) that
 * fetched a channel's playlist within the window. Players reload the playlist every target
 * duration, so a window of a few segments counts a watching player and forgets a gone one.
 */
export class ViewerTracker {
  private readonly lastSeen = new Map<string, number>();

  constructor(private readonly windowMs: number) {}

  seen(channelId: string, client: string, now = Date.now()): void {
    const key = `${channelId}\n${client}`;
    // Re-inserted so the map stays ordered by last sight: pruning stops at the first fresh one.
    this.lastSeen.delete(key);
    this.lastSeen.set(key, now);
    this.prune(now);
  }

  count(now = Date.now()): number {
    this.prune(now);
    return this.lastSeen.size;
  }

  /** Forgets clients gone quiet, oldest first (also when nothing scrapes the count). */
  private prune(now: number): void {
    for (const [key, at] of this.lastSeen) {
      if (now - at <= this.windowMs) break;
      this.lastSeen.delete(key);
    }
  }
}

/**
 * The live process's Prometheus metrics, on a registry of its own that the process entry merges
 * into the one it exposes. Labels stay bounded: no channel ids.
 */
export class LiveMetrics {
  readonly registry = new Registry();
  /**
   * For the metrics the viewer processes' reports feed (each reports every second): a scrape
   * asks them for their report first, so that it counts every answer written before it.
   */
  private readonly afterReports = { collect: () => this.reported() };
  private reporting: Promise<void> | undefined;

  readonly whip = new Counter({
    name: 'ukiyo_live_whip_requests_total',
    help: 'WHIP offers answered, by HTTP status (201 a publisher connected)',
    labelNames: ['status'] as const,
    registers: [this.registry],
  });

  readonly hlsRequests = new Counter({
    name: 'ukiyo_live_hls_requests_total',
    help: 'HLS requests answered, by file kind (playlist, segment), status and where the file was (local, peer)',
    labelNames: ['kind', 'status', 'source'] as const,
    registers: [this.registry],
    ...this.afterReports,
  });

  readonly hlsDuration = new Histogram({
    name: 'ukiyo_live_hls_request_duration_seconds',
    help: 'HLS request latency, by where the file was (local, peer: passed on from the live process holding the publisher)',
    labelNames: ['source'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
    ...this.afterReports,
  });

  readonly hlsBytes = new Counter({
    name: 'ukiyo_live_hls_bytes_total',
    help: 'Bytes of HLS playlists and segments sent to viewers',
    registers: [this.registry],
    ...this.afterReports,
  });

  readonly viewersRefused = new Counter({
    name: 'ukiyo_live_webrtc_viewers_refused_total',
    help: 'WebRTC viewers refused because this process had no room (each viewer process above LIVE_MAX_EVENT_LOOP_UTILIZATION, or the room its viewers leave taken)',
    registers: [this.registry],
  });

  readonly viewersShed = new Counter({
    name: 'ukiyo_live_webrtc_viewers_shed_total',
    help: 'WebRTC viewers disconnected, the newest of their viewer process first, because that process stayed saturated',
    registers: [this.registry],
  });

  readonly hlsRefused = new Counter({
    name: 'ukiyo_live_hls_requests_refused_total',
    help: 'HLS requests answered 503 because their client was not admitted in time (the thread answering HLS above LIVE_MAX_EVENT_LOOP_UTILIZATION, or the room it leaves taken)',
    registers: [this.registry],
    ...this.afterReports,
  });

  readonly hlsHandedOff = new Counter({
    name: 'ukiyo_live_hls_connections_handed_off_total',
    help: 'Connections whose first request was an LL-HLS file, handed to a viewer process to answer (the rest of this process counts what they answer)',
    registers: [this.registry],
  });

  readonly hlsShed = new Counter({
    name: 'ukiyo_live_hls_viewers_shed_total',
    help: 'HLS clients no longer admitted, the newest first, because the thread answering HLS stayed saturated',
    registers: [this.registry],
    ...this.afterReports,
  });

  readonly ingestBytes = new Counter({
    name: 'ukiyo_live_ingest_bytes_total',
    help: 'Bytes of media received from publishers (RTP payloads)',
    registers: [this.registry],
  });

  constructor(
    private readonly probes: {
      publishers: () => number;
      viewers: () => number;
      webRtcViewers: () => number;
      eventLoopUtilization: () => number;
      hlsClientsWaiting: () => number;
      hlsRequestsHeld: () => number;
      /** What the viewer processes answered since their last report, asked for now. */
      askForReports: () => Promise<void>;
    },
  ) {
    const readAfterReports = async (read: () => number) => {
      await this.reported();
      return read();
    };
    probeGauges(this.registry, [
      [
        'ukiyo_live_publishers',
        'Publishers connected to this process (one ffmpeg ladder each)',
        probes.publishers,
      ],
      [
        'ukiyo_live_viewers',
        'HLS viewers of this process: clients that fetched a playlist within the last few segments',
        () => readAfterReports(probes.viewers),
      ],
      [
        'ukiyo_live_webrtc_viewers',
        'WebRTC viewers (WHEP, Sora recvonly) connected to this process',
        probes.webRtcViewers,
      ],
      [
        'ukiyo_live_event_loop_utilization',
        'The busiest WebRTC viewer process of this live process over the last 3 s, 0 to 1: past LIVE_MAX_EVENT_LOOP_UTILIZATION that one takes no new viewers',
        probes.eventLoopUtilization,
      ],
      [
        'ukiyo_live_hls_clients_waiting',
        'New HLS clients whose request waits for room on a thread answering HLS (a crowd let in a window at a time)',
        () => readAfterReports(probes.hlsClientsWaiting),
      ],
      [
        'ukiyo_live_hls_requests_held',
        'HLS requests held until what they ask for is produced (LL-HLS blocking reloads and preload hints)',
        () => readAfterReports(probes.hlsRequestsHeld),
      ],
    ]);
  }

  /** One ask for the viewer processes' reports, shared by the metrics a scrape reads at once. */
  private reported(): Promise<void> {
    this.reporting ??= this.probes.askForReports().finally(() => (this.reporting = undefined));
    return this.reporting;
  }
}
