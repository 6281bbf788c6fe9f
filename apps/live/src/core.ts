import { randomBytes } from 'node:crypto';
import type { Agent as HttpAgent } from 'node:http';
import type { Agent as HttpsAgent } from 'node:https';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { encryptKeyUrl, type Rendition } from '@ukiyo/contract';
import { sql } from 'kysely';
import type { Logger } from 'pino';
import { findChannel, markChannelDeleting, type ChannelRow, type ChannelSettings } from '@ukiyo/server';
import { loadDestination, type Archive, type Destination } from './archive.ts';
import { PublishError, type Ingest, type IngestProtocol } from './ingest/ingest.ts';
import { WebRtcIngest, type IceSettings, type PublishedMedia, type WebRtcTimings } from './ingest/webrtc.ts';
import { TOKEN_REQUIRED, verifyPlaybackToken } from './playback-token-format.ts';
import { playbackKey } from './playback-tokens.ts';
import {
  Broadcast,
  type RemoteViewer,
  type ViewerProcess,
  type ViewerProcesses,
} from './viewers/processes.ts';
import { LadderRtp } from './viewers/rtp-source.ts';
import { baselineRenditions, webRtcRenditions } from './hls/ladder.ts';
import type { LowLatencyRendition } from './hls/ll-hls.ts';
import { PublishSession, type SessionTimings } from './session.ts';
import type { LiveMetrics } from './metrics.ts';
import type { LiveUsage } from './usage.ts';
import type { LiveDeps } from './types.ts';
import type { Webhooks } from './webhooks.ts';

export interface CoreOptions {
  /** `{DATA_DIR}/live`: one directory per channel, one per publisher session inside. */
  dir: string;
  /** Base of the URLs reported to clients (playlists). */
  publicUrl: string;
  timings: LiveTimings;
  ice: IceSettings;
  /** A claim on a channel whose holder stopped refreshing it for this long is free again. */
  staleClaimMs: number;
  /** Where peer live processes reach this one (LIVE_INTERNAL_URL); unset: no peers. */
  internalUrl?: string;
  /** The processes WebRTC viewers run on, each admitting them while it has room. */
  viewerProcesses: ViewerProcesses;
}

export type LiveTimings = SessionTimings & WebRtcTimings;

/** How long a peer's address for a channel is remembered (a new publisher may move it). */
const PEER_LOOKUP_TTL_MS = 2_000;
/** A viewer arriving before the publisher's first video packet waits this long for it. */
const FIRST_VIDEO_WAIT_MS = 5_000;
/** WebRTC viewers of one channel in one process: each costs a peer connection and its sends. */
export const MAX_VIEWERS_PER_CHANNEL = 500;

/** A channel a peer live process holds: the peer's LIVE_INTERNAL_URL, the channel's organization. */
export interface PeerHolding {
  url: string;
  organizationId: number;
}

interface Hosted {
  organizationId: number;
  renditions: Rendition[];
  /** The session publishing now, if any; its files stay served after it ends. */
  session?: PublishSession;
  connectionId?: string;
  /** The latest session's LL-HLS renditions (none for encrypted channels), served from memory. */
  lowLatency?: LowLatencyRendition[] | undefined;
  /**
   * The media WebRTC viewers get, once its first video packet arrived: a WebRTC publisher's own,
   * or (RTMP, SRT) the ladder's WebRTC rungs, sent back over RTP by its ffmpeg (ladderRtp).
   */
  broadcast?: Promise<Broadcast>;
  ladderRtp?: LadderRtp | undefined;
  viewers: Map<string, RemoteViewer>;
}

function renditionsOf(row: ChannelRow): Rendition[] {
  return (row.settings as Partial<ChannelSettings>).hls ?? [];
}

/**
 * The live process's state: which channels it hosts (publisher sessions and their HLS files),
 * the channel's claim in the database (one publisher per channel across processes), deletion.
 */
export class LiveCore {
  /** Channels with files in this process's directory, publishing or not. */
  private readonly hosted = new Map<string, Hosted>();
  /** Deletions in progress, so a second request waits for the first. */
  private readonly deleting = new Map<string, Promise<void>>();
  /** Channels hosted by peer processes: their address, briefly remembered. */
  private readonly peers = new Map<string, { holding: PeerHolding | undefined; until: number }>();

  constructor(
    private readonly deps: LiveDeps,
    private readonly log: Logger,
    private readonly usage: LiveUsage,
    private readonly metrics: LiveMetrics,
    private readonly webhooks: Webhooks,
    private readonly archive: Archive,
    private readonly agents: { http: HttpAgent; https: HttpsAgent },
    private readonly options: CoreOptions,
  ) {}

  /**
   * What the HLS handler may serve: the channel's organization and renditions (looked up for
   * every HLS request, so not copied).
   */
  served(channelId: string): Readonly<Hosted> | undefined {
    return this.hosted.get(channelId);
  }

  /** Where the channel's sessions write their files (`{connection id}/hls/...`). */
  channelDir(channelId: string): string {
    return join(this.options.dir, channelId);
  }

  /**
   * The peer live process holding a channel this process does not host (its LIVE_INTERNAL_URL)
   * and the channel's organization, or undefined when there is none (no such channel, never
   * published, or published here).
   */
  async peerHolding(channelId: string): Promise<PeerHolding | undefined> {
    if (!this.options.internalUrl) return undefined;
    const now = Date.now();
    const known = this.peers.get(channelId);
    if (known && known.until > now) return known.holding;
    const row = await this.deps.db
      .selectFrom('channels')
      .select(['host_url', 'organization_id'])
      .where('id', '=', channelId)
      .where('status', '=', 'normal')
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    const holding =
      row?.host_url && row.host_url !== this.options.internalUrl
        ? { url: row.host_url, organizationId: row.organization_id }
        : undefined;
    // Expired entries go as they are looked up again; bound the map against scans of ids.
    if (this.peers.size > 10_000) this.peers.clear();
    this.peers.set(channelId, { holding, until: now + PEER_LOOKUP_TTL_MS });
    return holding;
  }

  /** The peer live process holding the channel: its LIVE_INTERNAL_URL (peerHolding). */
  async peerOf(channelId: string): Promise<string | undefined> {
    return (await this.peerHolding(channelId))?.url;
  }

  get sessionCount(): number {
    return [...this.hosted.values()].filter((hosted) => hosted.session).length;
  }

  /**
   * The organization publishing to a channel named by a stream key or SRT stream id (no bearer
   * names it): the channel must be undeleted and its organization a live one.
   */
  async ownerOf(channelId: string): Promise<number> {
    const row = await this.deps.db
      .selectFrom('channels')
      .innerJoin('organizations', 'organizations.id', 'channels.organization_id')
      .select(['channels.organization_id', 'organizations.is_live'])
      .where('channels.id', '=', channelId)
      .where('channels.deleted_at', 'is', null)
      .executeTakeFirst();
    if (!row) throw new PublishError(404, 'no such channel');
    if (!row.is_live) throw new PublishError(403, 'live streaming is not available for this organization');
    return row.organization_id;
  }

  /** A WebRTC publisher's ingest, not yet negotiated (WHIP, Sora signaling). */
  webRtcIngest(protocol: IngestProtocol): WebRtcIngest {
    return new WebRtcIngest(protocol, this.options.ice, this.options.timings, this.log);
  }

  /**
   * Starts a publisher on a channel of the organization: checks the channel and the auth
   * webhook (sent `metadata` when the publisher gave some), claims the channel, runs `connect`
   * (the ingest's negotiation) and encodes the ingest's media into the channel's HLS ladder.
   */
  async publish(
    organizationId: number,
    channelId: string,
    ingest: Ingest,
    connect: (connectionId: string) => Promise<void>,
    metadata?: unknown,
  ): Promise<{ connectionId: string }> {
    const { db } = this.deps;
    const channel = await findChannel(db, organizationId, channelId);
    if (!channel || channel.status !== 'normal') throw new PublishError(404, 'no such channel');
    const renditions = renditionsOf(channel);
    if (renditions.length === 0) throw new PublishError(409, 'the channel has no HLS renditions');
    if (this.hosted.get(channelId)?.session)
      throw new PublishError(409, 'the channel already has a publisher');
    const connectionId = randomBytes(10).toString('hex');
    if (
      channel.auth_webhook_url &&
      !(await this.webhooks.allowed(organizationId, channel.auth_webhook_url, {
        channel_id: channelId,
        connection_id: connectionId,
        role: 'sendonly',
        protocol: ingest.protocol,
        ...(metadata === undefined ? {} : { metadata }),
        timestamp: new Date().toISOString(),
      }))
    ) {
      throw new PublishError(403, 'refused by the auth webhook');
    }
    const claimed = await db
      .updateTable('channels')
      .set({
        active_connections: 1,
        connection_id: connectionId,
        playlist_url: null,
        heartbeat_at: new Date(),
        host_url: this.options.internalUrl ?? null,
      })
      .where('id', '=', channelId)
      .where('status', '=', 'normal')
      .where('deleted_at', 'is', null)
      .where((eb) =>
        eb.or([
          eb('active_connections', '=', 0),
          eb('heartbeat_at', 'is', null),
          eb('heartbeat_at', '<', new Date(Date.now() - this.options.staleClaimMs)),
        ]),
      )
      .executeTakeFirst();
    if (claimed.numUpdatedRows === 0n) throw new PublishError(409, 'the channel already has a publisher');

    const hosted: Hosted = { organizationId, renditions, connectionId, viewers: new Map() };
    this.hosted.set(channelId, hosted);
    const log = this.log.child({ channelId });
    try {
      let media: Promise<PublishedMedia>;
      if (ingest instanceof WebRtcIngest) {
        const rungs = baselineRenditions(renditions);
        if (rungs.length > 0) hosted.ladderRtp = await LadderRtp.open(renditions, rungs, false, log);
        media = hosted.ladderRtp?.beneath(ingest) ?? ingest.media;
      } else {
        hosted.ladderRtp = await LadderRtp.open(renditions, webRtcRenditions(renditions), true, log);
        media = hosted.ladderRtp.media(ingest);
      }
      hosted.broadcast = media.then(
        (published) =>
          new Broadcast(published, connectionId, { organizationId, channelId }, this.options.viewerProcesses),
      );
      const destinations = await this.destinations(organizationId, renditions);
      const session = new PublishSession({
        channelId,
        organizationId,
        connectionId,
        renditions,
        dir: join(this.channelDir(channelId), connectionId),
        ...(channel.encrypt_key_enc && channel.kid
          ? {
              encryption: {
                key: Buffer.from(this.deps.secrets.open(channel.encrypt_key_enc), 'hex'),
                uri: encryptKeyUrl(channel.encrypt_key_uri, channel.kid),
              },
            }
          : {}),
        destinations,
        ...(hosted.ladderRtp ? { rtp: hosted.ladderRtp.outputs } : {}),
        eventWebhookUrl: channel.event_webhook_url,
        archive: this.archive,
        usage: this.usage,
        metrics: this.metrics,
        log: this.log.child({ channelId, connectionId, protocol: ingest.protocol }),
        timings: this.options.timings,
        onPlaylist: () =>
          void this.playlistReady(channel, connectionId).catch((error: unknown) =>
            this.log.warn({ err: error, channelId }, 'could not record the playlist URL'),
          ),
        onEnd: () => this.sessionEnded(channelId, connectionId),
      });
      hosted.session = session;
      hosted.lowLatency = session.lowLatency;
      // LL-HLS viewers are answered by the viewer processes (hls-serving.ts), which check the
      // playback tokens of a channel needing them with its key.
      const tokenKey = playbackKey(this.deps.secrets, channel)?.toString('hex');
      for (const [index, rendition] of (session.lowLatency ?? []).entries())
        this.options.viewerProcesses.mirror(
          {
            key: `${channelId}/${connectionId}/${index}`,
            channelId,
            connectionId,
            organizationId,
            targetDuration: renditions[index]!.durationSeconds,
            options: rendition.options,
            ...(tokenKey ? { playbackKey: tokenKey } : {}),
          },
          rendition,
        );
      this.usage.connected(connectionId, channelId, organizationId, 'publisher');
      // Files of the channel's previous session go: one session's files at a time.
      await rm(this.channelDir(channelId), { recursive: true, force: true });
      await connect(connectionId);
      await session.start(ingest);
      return { connectionId };
    } catch (error) {
      await ingest.close();
      if (hosted.session) await hosted.session.stop('negotiation failed');
      else {
        await this.endViewing(hosted);
        await this.release(channelId, connectionId);
      }
      throw error;
    }
  }

  /**
   * The archived renditions' destinations, opened now so that one whose secrets or endpoint are
   * unusable leaves its rendition unarchived from the start rather than failing every upload.
   */
  private async destinations(organizationId: number, renditions: Rendition[]) {
    const found = new Map<number, Destination>();
    for (const [index, rendition] of renditions.entries()) {
      const id = rendition.archive.archive_destination_id;
      if (!id) continue;
      const destination = await loadDestination(
        this.deps.db,
        this.deps.secrets,
        this.agents,
        this.deps.config.ALLOW_PRIVATE_ORIGINS,
        organizationId,
        id,
      ).catch((error: unknown) => {
        this.log.warn({ err: error, destinationId: id }, 'archive destination refused');
        return undefined;
      });
      if (destination) found.set(index, destination);
      else this.log.warn({ destinationId: id }, 'rendition not archived');
    }
    return found;
  }

  private playlistUrl(channelId: string, connectionId: string): string {
    return `${this.options.publicUrl}/hls/${channelId}/${connectionId}/master.m3u8`;
  }

  private async playlistReady(channel: ChannelRow, connectionId: string): Promise<void> {
    const url = this.playlistUrl(channel.id, connectionId);
    await this.deps.db
      .updateTable('channels')
      .set({ playlist_url: url })
      .where('id', '=', channel.id)
      .where('connection_id', '=', connectionId)
      .execute();
    await this.webhooks.event(channel.organization_id, channel.event_webhook_url, {
      channel_id: channel.id,
      connection_id: connectionId,
      timestamp: new Date().toISOString(),
      type: 'notify.playlist_url',
      playlist_url: url,
    });
  }

  private async sessionEnded(channelId: string, connectionId: string): Promise<void> {
    this.usage.disconnected(connectionId);
    const hosted = this.hosted.get(channelId);
    if (hosted?.connectionId === connectionId) {
      hosted.session = undefined;
      await this.endViewing(hosted);
    }
    await this.release(channelId, connectionId).catch((error: unknown) =>
      this.log.warn({ err: error, channelId }, 'could not release the channel'),
    );
  }

  private async release(channelId: string, connectionId: string): Promise<void> {
    await this.deps.db
      .updateTable('channels')
      .set({ active_connections: 0, connection_id: null, playlist_url: null, heartbeat_at: null })
      .where('id', '=', channelId)
      .where('connection_id', '=', connectionId)
      .execute();
  }

  /**
   * A WebRTC viewer of a channel on air in this process (WHEP): when a viewer process has room
   * for it (ViewerProcesses), its playback token when the channel needs one, then the auth
   * webhook, when the channel has one (role recvonly), then `negotiate` answers or offers and the
   * publisher's media is forwarded to it. Its connected time counts as the channel's WebRTC usage.
   */
  async watch(
    channelId: string,
    protocol: 'whep' | 'sora',
    playbackToken: string | undefined,
    negotiate: (viewer: RemoteViewer) => Promise<void>,
  ): Promise<RemoteViewer> {
    const hosted = this.hosted.get(channelId);
    if (!hosted?.session) throw new PublishError(404, 'the channel is not on air');
    if (hosted.viewers.size >= MAX_VIEWERS_PER_CHANNEL) {
      throw new PublishError(503, 'the channel has as many WebRTC viewers as this server takes');
    }
    const room = this.options.viewerProcesses.admit();
    if (!room) {
      this.metrics.viewersRefused.inc();
      throw new PublishError(503, 'this live server has no room for another WebRTC viewer now; HLS plays');
    }
    try {
      const viewer = await this.connectViewer(
        hosted,
        channelId,
        protocol,
        playbackToken,
        negotiate,
        room.process,
      );
      void viewer.ended.then(room.left);
      return viewer;
    } catch (error) {
      room.left();
      throw error;
    }
  }

  /** watch, once the viewer was admitted. */
  private async connectViewer(
    hosted: Hosted,
    channelId: string,
    protocol: 'whep' | 'sora',
    playbackToken: string | undefined,
    negotiate: (viewer: RemoteViewer) => Promise<void>,
    viewers: ViewerProcess,
  ): Promise<RemoteViewer> {
    const { organizationId } = hosted;
    const channel = await findChannel(this.deps.db, organizationId, channelId);
    if (!channel || channel.status !== 'normal') throw new PublishError(404, 'no such channel');
    const key = playbackKey(this.deps.secrets, channel);
    if (key && !verifyPlaybackToken(key, channelId, playbackToken ?? '')) {
      throw new PublishError(401, TOKEN_REQUIRED);
    }
    let timer: NodeJS.Timeout | undefined;
    const broadcast = await Promise.race([
      hosted.broadcast,
      new Promise<undefined>(
        (resolve) => (timer = setTimeout(() => resolve(undefined), FIRST_VIDEO_WAIT_MS)),
      ),
    ]).finally(() => clearTimeout(timer));
    if (!broadcast) throw new PublishError(409, 'the publisher sends no video yet');
    const viewer = viewers.open(broadcast);
    // A viewer refused or failing here is closed: its process would go on being sent the media.
    try {
      if (
        channel.auth_webhook_url &&
        !(await this.webhooks.allowed(organizationId, channel.auth_webhook_url, {
          channel_id: channelId,
          connection_id: viewer.id,
          role: 'recvonly',
          protocol,
          timestamp: new Date().toISOString(),
        }))
      ) {
        throw new PublishError(403, 'refused by the auth webhook');
      }
      await negotiate(viewer);
      if (!hosted.session) throw new PublishError(404, 'the channel is not on air');
    } catch (error) {
      await viewer.close();
      throw error;
    }
    hosted.viewers.set(viewer.id, viewer);
    this.usage.connected(viewer.id, channelId, organizationId, 'viewer');
    void viewer.ended.then(() => {
      hosted.viewers.delete(viewer.id);
      this.usage.disconnected(viewer.id);
    });
    return viewer;
  }

  /** WHEP DELETE: ends the viewer named by the Location it was given. */
  async unwatch(channelId: string, viewerId: string): Promise<boolean> {
    const viewer = this.hosted.get(channelId)?.viewers.get(viewerId);
    if (!viewer) return false;
    await viewer.close();
    return true;
  }

  /** WebRTC viewers of this process, every channel. */
  get viewerCount(): number {
    let count = 0;
    for (const hosted of this.hosted.values()) count += hosted.viewers.size;
    return count;
  }

  /** The publisher left: its viewers are disconnected and its media no longer forwarded. */
  private async endViewing(hosted: Hosted): Promise<void> {
    const broadcast = hosted.broadcast;
    hosted.broadcast = undefined;
    // After ffmpeg's exit (the session's end): nothing sends to its ports any more.
    hosted.ladderRtp?.close();
    hosted.ladderRtp = undefined;
    await Promise.all([...hosted.viewers.values()].map((viewer) => viewer.close()));
    // Unsettled when the publisher never sent video: nothing was subscribed.
    void broadcast?.then((b) => b.close());
  }

  /** WHIP DELETE: ends the session named by the Location the publisher was given. */
  async unpublish(organizationId: number, channelId: string, connectionId: string): Promise<boolean> {
    const hosted = this.hosted.get(channelId);
    if (
      !hosted?.session ||
      hosted.organizationId !== organizationId ||
      hosted.connectionId !== connectionId
    ) {
      return false;
    }
    await hosted.session.stop('publisher left (WHIP DELETE)');
    return true;
  }

  /**
   * DeleteChannel: 'deleting' at once, then publisher and files gone, then deleted for good.
   * A channel whose publisher another live process holds is finished by that process's tick.
   */
  async deleteChannel(organizationId: number, channelId: string): Promise<boolean> {
    if (!(await markChannelDeleting(this.deps.db, organizationId, channelId))) return false;
    const claim = await this.deps.db
      .selectFrom('channels')
      .select(['id', 'active_connections', 'heartbeat_at'])
      .where('id', '=', channelId)
      .executeTakeFirstOrThrow();
    if (!this.heldElsewhere(claim)) await this.finishDeletion(channelId);
    return true;
  }

  /** Another live process holds the channel's publisher and keeps its claim fresh. */
  private heldElsewhere(claim: { id: string; active_connections: number; heartbeat_at: Date | null }) {
    return (
      !this.hosted.get(claim.id)?.session &&
      claim.active_connections > 0 &&
      claim.heartbeat_at !== null &&
      claim.heartbeat_at.getTime() > Date.now() - this.options.staleClaimMs
    );
  }

  private finishDeletion(channelId: string): Promise<void> {
    let running = this.deleting.get(channelId);
    if (!running) {
      running = (async () => {
        await this.teardown(channelId, 'channel deleted');
        await this.deps.db
          .updateTable('channels')
          .set({
            status: 'deleted',
            deleted_at: new Date(),
            active_connections: 0,
            connection_id: null,
            playlist_url: null,
            heartbeat_at: null,
          })
          .where('id', '=', channelId)
          .execute();
      })().finally(() => this.deleting.delete(channelId));
      this.deleting.set(channelId, running);
    }
    return running;
  }

  private async teardown(channelId: string, reason: string): Promise<void> {
    const hosted = this.hosted.get(channelId);
    this.hosted.delete(channelId);
    this.options.viewerProcesses.forget(channelId);
    await hosted?.session?.stop(reason);
    if (hosted) await this.endViewing(hosted);
    await rm(this.channelDir(channelId), { recursive: true, force: true });
  }

  /**
   * Periodic: refreshes the claims of this process's publishers, and carries out deletions
   * asked for elsewhere (the console's channel.delete marks 'deleting'). A channel published
   * here is torn down by this process; one published nowhere by whichever process sees it.
   */
  async tick(): Promise<void> {
    const { db } = this.deps;
    const publishing = [...this.hosted.entries()].filter(([, hosted]) => hosted.session);
    if (publishing.length > 0) {
      await db
        .updateTable('channels')
        .set({ heartbeat_at: sql`now()` })
        .where(
          'id',
          'in',
          publishing.map(([id]) => id),
        )
        .where('status', '=', 'normal')
        .execute();
    }
    const doomed = await db
      .selectFrom('channels')
      .select(['id', 'active_connections', 'heartbeat_at'])
      .where('status', '=', 'deleting')
      .where('deleted_at', 'is', null)
      .execute();
    for (const row of doomed) {
      if (!this.heldElsewhere(row)) await this.finishDeletion(row.id);
    }
  }

  /** Ends every session and removes every file this process wrote. */
  async close(): Promise<void> {
    await Promise.allSettled(this.deleting.values());
    const channels = [...this.hosted.keys()];
    await Promise.all(channels.map((id) => this.teardown(id, 'the live server is closing')));
  }
}
