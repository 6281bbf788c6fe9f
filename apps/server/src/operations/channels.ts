import { randomBytes } from 'node:crypto';
import type { Rendition } from '@ukiyo/contract';
import type { Selectable } from 'kysely';
import { issuePublishCredential } from '../auth/publish-credentials.ts';
import { channelStreamSecret, streamKeyOf } from '../auth/stream-keys.ts';
import type { Config } from '../config.ts';
import type { SecretBox } from '../crypto/secret-box.ts';
import type { Db } from '../db/database.ts';
import type { ChannelTable } from '../db/tables.ts';
import { AppError, invalid } from '../http/app-error.ts';
import { statisticsPeriod } from '../services/billing.ts';
import { liveUsageReport } from '../services/live-usage.ts';
import { refusePrivateUrls } from '../services/public-hosts.ts';
import { organizationOf, type Handlers } from './context.ts';

/**
 * Channel records shared by the console's operations and the live API (apps/live): one place
 * creates a channel, with its HLS key, and one place starts its deletion.
 */
export interface ChannelSettings {
  hls: Rendition[];
  /** The channel's viewers need playback tokens, signed with this key (sealed). */
  playbackKeyEnc?: string;
}

export interface NewChannel {
  hls: Rendition[];
  encryptKeyUri: string;
  authWebhookUrl: string;
  eventWebhookUrl: string;
  /** Viewers need playback tokens (the live API's CreatePlaybackToken). */
  playbackTokens?: boolean;
}

export type ChannelRow = Selectable<ChannelTable>;

/** Archive destinations named by renditions must be the organization's own. */
async function checkDestinations(db: Db, organizationId: number, hls: Rendition[]): Promise<void> {
  for (const [index, rendition] of hls.entries()) {
    const id = rendition.archive.archive_destination_id;
    if (!id) continue;
    const found = await db
      .selectFrom('archive_destinations')
      .select('id')
      .where('id', '=', id)
      .where('organization_id', '=', organizationId)
      .executeTakeFirst();
    if (!found) throw invalid(`hls.${index}.archive.archive_destination_id`, 'validation.invalid');
  }
}

/**
 * A new channel. Its id is random and never reused (deleted rows stay as tombstones). With an
 * encrypt key URI the channel gets its AES-128 key (sealed) and a key id now, so the key is
 * fetchable before the first segment.
 */
export async function createChannelRecord(
  db: Db,
  secrets: SecretBox,
  organizationId: number,
  input: NewChannel,
): Promise<ChannelRow> {
  await checkDestinations(db, organizationId, input.hls);
  const encrypted = input.encryptKeyUri !== '';
  return db
    .insertInto('channels')
    .values({
      id: randomBytes(10).toString('hex'),
      organization_id: organizationId,
      settings: JSON.stringify({
        hls: input.hls,
        ...(input.playbackTokens ? { playbackKeyEnc: secrets.seal(randomBytes(32).toString('hex')) } : {}),
      } satisfies ChannelSettings),
      encrypt_key_uri: input.encryptKeyUri,
      encrypt_key_enc: encrypted ? secrets.seal(randomBytes(16).toString('hex')) : null,
      kid: encrypted ? randomBytes(12).toString('hex') : null,
      auth_webhook_url: input.authWebhookUrl,
      event_webhook_url: input.eventWebhookUrl,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The organization's channel that is not deleted (deleting ones included), if any. */
export function findChannel(db: Db, organizationId: number, id: string): Promise<ChannelRow | undefined> {
  return db
    .selectFrom('channels')
    .selectAll()
    .where('id', '=', id)
    .where('organization_id', '=', organizationId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
}

export function listChannels(db: Db, organizationId: number): Promise<ChannelRow[]> {
  return db
    .selectFrom('channels')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('deleted_at', 'is', null)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/**
 * Marks a channel 'deleting'; the live process holding its publisher (or any live process
 * when none does) tears it down and then marks it deleted. False when there is no such channel.
 */
export async function markChannelDeleting(db: Db, organizationId: number, id: string): Promise<boolean> {
  const result = await db
    .updateTable('channels')
    .set({ status: 'deleting' })
    .where('id', '=', id)
    .where('organization_id', '=', organizationId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

function settingsOf(row: ChannelRow): ChannelSettings {
  const settings = row.settings as Partial<ChannelSettings>;
  return { hls: settings.hls ?? [] };
}

/** Where publishers reach the live server (the same base the live server reports URLs under). */
export function liveBaseUrl(config: Config): string {
  return (config.LIVE_PUBLIC_URL ?? `http://localhost:${config.LIVE_PORT}`).replace(/\/+$/, '');
}

/**
 * A publisher's claim on a channel whose heartbeat is older than this was left by a process that
 * died: live processes may take the channel over, and the console no longer shows it on air.
 */
export const PUBLISHER_STALE_MS = 30_000;

/** The Sora signaling URL under a live base URL: what the live API reports as `sora_url`. */
function soraSignalingUrl(liveBase: string): string {
  return `${liveBase.replace(/^http/, 'ws')}/signaling`;
}

/** Where and how a channel's publishers connect, each kind of ingest. */
export interface IngestEndpoints {
  whipUrl: string;
  soraUrl: string;
  /** The RTMP server URL; the stream key goes after it (`{rtmpUrl}/{streamKey}`). */
  rtmpUrl: string;
  rtmpsUrl: string | null;
  streamKey: string;
  /** The whole SRT caller URL: stream id and passphrase included. */
  srtUrl: string;
}

export function ingestEndpoints(config: Config, secrets: SecretBox, channelId: string): IngestEndpoints {
  const base = liveBaseUrl(config);
  const host = new URL(base).hostname;
  const secret = channelStreamSecret(secrets, channelId);
  return {
    whipUrl: `${base}/whip/${channelId}`,
    soraUrl: soraSignalingUrl(base),
    rtmpUrl: `rtmp://${host}:${config.LIVE_RTMP_PORT}/live`,
    rtmpsUrl: config.LIVE_RTMPS_PORT === undefined ? null : `rtmps://${host}:${config.LIVE_RTMPS_PORT}/live`,
    streamKey: streamKeyOf(secrets, channelId),
    srtUrl: `srt://${host}:${config.LIVE_SRT_PORT}?streamid=${channelId}&passphrase=${secret}`,
  };
}

export function presentChannel(row: ChannelRow, config: Config, secrets: SecretBox) {
  return {
    id: row.id,
    createdAt: row.created_at.toISOString(),
    activeConnectionCount: row.active_connections,
    onAir:
      row.active_connections > 0 &&
      row.heartbeat_at !== null &&
      row.heartbeat_at.getTime() > Date.now() - PUBLISHER_STALE_MS,
    hlsUrl: row.playlist_url,
    status: row.status === 'deleting' ? ('deleting' as const) : ('normal' as const),
    settings: {
      hls: settingsOf(row).hls,
      encryptKeyUri: row.encrypt_key_uri,
      authWebhookUrl: row.auth_webhook_url,
      eventWebhookUrl: row.event_webhook_url,
    },
    liveParams: {
      connectionId: row.connection_id,
      kid: row.kid,
      ...ingestEndpoints(config, secrets, row.id),
    },
  };
}

export const channelHandlers: Handlers = {
  'channel.list': async (_input, context) => {
    const rows = await listChannels(context.deps.db, organizationOf(context).id);
    return { channels: rows.map((row) => presentChannel(row, context.deps.config, context.deps.secrets)) };
  },

  'channel.add': async (input, context) => {
    await refusePrivateUrls(
      { authWebhookUrl: input.authWebhookUrl, eventWebhookUrl: input.eventWebhookUrl },
      context.deps.config.ALLOW_PRIVATE_ORIGINS,
    );
    const row = await createChannelRecord(
      context.deps.db,
      context.deps.secrets,
      organizationOf(context).id,
      input,
    );
    return { channel: presentChannel(row, context.deps.config, context.deps.secrets) };
  },

  'channel.delete': async ({ id }, context) => {
    if (!(await markChannelDeleting(context.deps.db, organizationOf(context).id, id))) {
      throw new AppError('not found');
    }
    return {};
  },

  'channel.publish_credential': async ({ channelId }, context) => {
    const organizationId = organizationOf(context).id;
    const channel = await findChannel(context.deps.db, organizationId, channelId);
    if (!channel || channel.status === 'deleting') throw new AppError('not found');
    const { credential, expiresAt } = issuePublishCredential(
      context.deps.secrets,
      organizationId,
      channel.id,
    );
    return { credential, expiresAt: expiresAt.toISOString() };
  },

  'channel.statistics': async (input, context) => {
    const { from, to } = statisticsPeriod(input);
    return liveUsageReport(context.deps.db, organizationOf(context).id, from, to);
  },
};
