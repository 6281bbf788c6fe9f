import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { Db } from './types.ts';

/** Distinct HLS clients remembered per channel between flushes (beyond, they go uncounted). */
const MAX_HLS_CLIENTS = 100_000;

/** Who a WebRTC connection is: the publisher, or a viewer (WHEP, Sora recvonly). */
export type ConnectionRole = 'publisher' | 'viewer';

interface Counter {
  organizationId: number;
  connectedMs: number;
  /** The publisher's part of connectedMs. */
  publishingMs: number;
  /** HLS clients (address and user agent) seen since the last flush: viewers at once. */
  hlsClients: Set<string>;
  /** The viewers of a write that failed, kept for the next. */
  hlsViewersUnwritten: number;
  /** Connections opened since the last flush. */
  connections: number;
  bytesIn: number;
  hlsRequests: number;
  hlsBytesOut: number;
  /** Publishers connected now, and the most at once since the last flush. */
  concurrent: number;
  maxConcurrent: number;
}

/**
 * Live usage per channel, counted in memory and added to `live_usage_hourly` on each flush
 * (adding upserts, so several live processes share rows). Connected time of open connections
 * is taken up to the flush, so a long stream shows in every hour it spans.
 */
export class LiveUsage {
  private counters = new Map<string, Counter>();
  private readonly open = new Map<string, { channelId: string; role: ConnectionRole; since: number }>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
  ) {}

  private counter(channelId: string, organizationId: number): Counter {
    let counter = this.counters.get(channelId);
    if (!counter) {
      counter = {
        organizationId,
        connectedMs: 0,
        publishingMs: 0,
        hlsClients: new Set(),
        hlsViewersUnwritten: 0,
        connections: 0,
        bytesIn: 0,
        hlsRequests: 0,
        hlsBytesOut: 0,
        concurrent: 0,
        maxConcurrent: 0,
      };
      this.counters.set(channelId, counter);
    }
    return counter;
  }

  connected(connectionId: string, channelId: string, organizationId: number, role: ConnectionRole): void {
    const counter = this.counter(channelId, organizationId);
    counter.connections++;
    counter.concurrent++;
    counter.maxConcurrent = Math.max(counter.maxConcurrent, counter.concurrent);
    this.open.set(connectionId, { channelId, role, since: Date.now() });
  }

  disconnected(connectionId: string): void {
    const connection = this.open.get(connectionId);
    if (!connection) return;
    this.open.delete(connectionId);
    this.addConnected(connection, Date.now());
    this.counters.get(connection.channelId)!.concurrent--;
  }

  /** Connected time of `connection` up to `now`, the publisher's counted apart as well. */
  private addConnected(connection: { channelId: string; role: ConnectionRole; since: number }, now: number) {
    const counter = this.counters.get(connection.channelId)!;
    counter.connectedMs += now - connection.since;
    if (connection.role === 'publisher') counter.publishingMs += now - connection.since;
  }

  bytesIn(channelId: string, organizationId: number, bytes: number): void {
    this.counter(channelId, organizationId).bytesIn += bytes;
  }

  /** One HLS answer to `client` (its address and user agent): a request, its bytes, a viewer. */
  hls(channelId: string, organizationId: number, bytes: number, client: string): void {
    const counter = this.counter(channelId, organizationId);
    counter.hlsRequests++;
    counter.hlsBytesOut += bytes;
    if (counter.hlsClients.size < MAX_HLS_CLIENTS) counter.hlsClients.add(client);
  }

  /** HLS answers a viewer process gave (viewers/hls-serving.ts): requests, bytes, the clients answered. */
  hlsAnswers(
    channelId: string,
    organizationId: number,
    requests: number,
    bytes: number,
    clients: readonly string[],
  ): void {
    const counter = this.counter(channelId, organizationId);
    counter.hlsRequests += requests;
    counter.hlsBytesOut += bytes;
    this.hlsViewers(channelId, organizationId, clients);
  }

  /**
   * HLS clients a peer process served this process's channel to: viewers, counted with the
   * channel's own (their requests and bytes the peer counts).
   */
  hlsViewers(channelId: string, organizationId: number, clients: readonly string[]): void {
    const counter = this.counter(channelId, organizationId);
    for (const client of clients) {
      if (counter.hlsClients.size >= MAX_HLS_CLIENTS) return;
      counter.hlsClients.add(client);
    }
  }

  start(intervalMs: number): void {
    this.timer = setInterval(() => void this.flush(), intervalMs);
    this.timer.unref();
  }

  /** Writes what was counted since the last flush; a failed write is retried with the next. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.write());
    return this.flushing;
  }

  private async write(): Promise<void> {
    const now = Date.now();
    for (const connection of this.open.values()) {
      this.addConnected(connection, now);
      connection.since = now;
    }
    const hour = new Date(Math.floor(now / 3_600_000) * 3_600_000);
    const taken = this.counters;
    this.counters = new Map();
    const rows = [];
    for (const [channelId, counter] of taken) {
      const seconds = Math.floor(counter.connectedMs / 1000);
      const publishing = Math.floor(counter.publishingMs / 1000);
      // Sub-second remainders and open connections carry over to the next flush.
      if (counter.concurrent > 0 || counter.connectedMs - seconds * 1000 > 0) {
        const next = this.counter(channelId, counter.organizationId);
        next.connectedMs += counter.connectedMs - seconds * 1000;
        next.publishingMs += counter.publishingMs - publishing * 1000;
        next.concurrent = counter.concurrent;
        next.maxConcurrent = counter.concurrent;
      }
      if (
        seconds === 0 &&
        counter.connections === 0 &&
        counter.bytesIn === 0 &&
        counter.hlsRequests === 0 &&
        counter.maxConcurrent === 0
      ) {
        continue;
      }
      rows.push({
        channel_id: channelId,
        organization_id: counter.organizationId,
        hour,
        connected_seconds: seconds,
        max_concurrent: counter.maxConcurrent,
        connections: counter.connections,
        bytes_in: counter.bytesIn,
        hls_requests: counter.hlsRequests,
        hls_bytes_out: counter.hlsBytesOut,
        publishing_seconds: publishing,
        hls_max_viewers: Math.max(counter.hlsClients.size, counter.hlsViewersUnwritten),
      });
    }
    if (rows.length === 0) return;
    try {
      await this.db
        .insertInto('live_usage_hourly')
        .values(rows)
        .onConflict((oc) =>
          oc.columns(['channel_id', 'hour']).doUpdateSet({
            connected_seconds: sql`live_usage_hourly.connected_seconds + excluded.connected_seconds`,
            max_concurrent: sql`greatest(live_usage_hourly.max_concurrent, excluded.max_concurrent)`,
            connections: sql`live_usage_hourly.connections + excluded.connections`,
            bytes_in: sql`live_usage_hourly.bytes_in + excluded.bytes_in`,
            hls_requests: sql`live_usage_hourly.hls_requests + excluded.hls_requests`,
            hls_bytes_out: sql`live_usage_hourly.hls_bytes_out + excluded.hls_bytes_out`,
            publishing_seconds: sql`live_usage_hourly.publishing_seconds + excluded.publishing_seconds`,
            hls_max_viewers: sql`greatest(live_usage_hourly.hls_max_viewers, excluded.hls_max_viewers)`,
          }),
        )
        .execute();
    } catch (error) {
      this.log.warn({ err: error }, 'live usage flush failed; retried with the next');
      for (const row of rows) {
        const counter = this.counter(row.channel_id, row.organization_id);
        counter.connectedMs += row.connected_seconds * 1000;
        counter.connections += row.connections;
        counter.bytesIn += row.bytes_in;
        counter.hlsRequests += row.hls_requests;
        counter.hlsBytesOut += row.hls_bytes_out;
        counter.publishingMs += row.publishing_seconds * 1000;
        counter.hlsViewersUnwritten = Math.max(counter.hlsViewersUnwritten, row.hls_max_viewers);
        counter.maxConcurrent = Math.max(counter.maxConcurrent, row.max_concurrent);
      }
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}
