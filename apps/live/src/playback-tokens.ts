import { createHmac, timingSafeEqual } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import type { ChannelRow, ChannelSettings } from '@ukiyo/server';
import { errorResponse, LiveApiError, type LiveEnv } from './api.ts';
import type { PeerSignature } from './hls/peer-signature.ts';
import type { Db, SecretBox } from './types.ts';

/**
 * Signed playback tokens: `{expiry in Unix seconds}.{HMAC-SHA256 of "{channel_id}.{expiry}"}`
 * (base64url) under the channel's own key, made by the live API's CreatePlaybackToken. A token
 * names one channel and is useless after its expiry; deleting the channel voids all of them.
 */
export function mintPlaybackToken(key: Buffer, channelId: string, expiresAt: Date): string {
  const expiry = Math.floor(expiresAt.getTime() / 1000);
  return `${expiry}.${signature(key, channelId, expiry).toString('base64url')}`;
}

function signature(key: Buffer, channelId: string, expiry: number): Buffer {
  return createHmac('sha256', key).update(`${channelId}.${expiry}`).digest();
}

export function verifyPlaybackToken(
  key: Buffer,
  channelId: string,
  token: string,
  now = Date.now(),
): boolean {
  const match = /^(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(token);
  if (!match) return false;
  const expiry = Number(match[1]);
  if (expiry * 1000 <= now) return false;
  return timingSafeEqual(Buffer.from(match[2]!, 'base64url'), signature(key, channelId, expiry));
}

/** Whether the channel's viewers need playback tokens (it was created so; that never changes). */
export function needsPlaybackToken(channel: Pick<ChannelRow, 'settings'>): boolean {
  return (channel.settings as Partial<ChannelSettings>).playbackKeyEnc !== undefined;
}

/** The channel's playback key, when its viewers need tokens. */
export function playbackKey(secrets: SecretBox, channel: Pick<ChannelRow, 'settings'>): Buffer | undefined {
  const sealed = (channel.settings as Partial<ChannelSettings>).playbackKeyEnc;
  return sealed ? Buffer.from(secrets.open(sealed), 'hex') : undefined;
}

/** How long a channel's need for tokens is remembered by the HLS check (it never changes). */
const KEY_CACHE_MS = 10_000;

/** Channels' playback keys as the HLS check needs them, briefly remembered. */
export class PlaybackKeys {
  private readonly keys = new Map<string, { key: Buffer | undefined; until: number }>();

  constructor(
    private readonly db: Db,
    private readonly secrets: SecretBox,
  ) {}

  async keyOf(channelId: string): Promise<Buffer | undefined> {
    const known = this.keys.get(channelId);
    if (known && known.until > Date.now()) return known.key;
    const row = await this.db
      .selectFrom('channels')
      .select('settings')
      .where('id', '=', channelId)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    const key = row && playbackKey(this.secrets, row);
    // Bounded against scans of ids; expired entries go as they are looked up again.
    if (this.keys.size > 10_000) this.keys.clear();
    this.keys.set(channelId, { key, until: Date.now() + KEY_CACHE_MS });
    return key;
  }

  /**
   * Whether the channel is known, without asking the database, to need no token: the HLS
   * serving's fast path (hls.ts) takes only such channels' requests and leaves the others,
   * and those of channels not looked up lately, to the check.
   */
  knownOpen(channelId: string, now = Date.now()): boolean {
    const known = this.keys.get(channelId);
    return known !== undefined && known.key === undefined && known.until > now;
  }
}

/**
 * HLS of channels created with playback_token_required: every playlist and segment request
 * carries `?token=`. hls.js and other players resolve a playlist's relative URIs without its
 * query, so each playlist answered has the token appended to its URIs: the URI lines and the
 * URI attributes of its tags (RFC 8216 4.1), but not EXT-X-KEY's, which is the customer's key
 * server. The playlist's text is otherwise left as the packager wrote it.
 */
export function hlsPlaybackTokens(
  keys: PlaybackKeys,
  peers: Pick<PeerSignature, 'signedRequest'>,
): MiddlewareHandler<LiveEnv> {
  return async (c, next) => {
    const channelId = c.req.path.split('/')[2] ?? '';
    if (!/^[0-9a-f]{1,64}$/.test(channelId)) return next();
    const key = await keys.keyOf(channelId);
    // Another live process asks without the token: it checked its viewer's (hls.ts peerTarget).
    if (!key || peers.signedRequest(c)) return next();
    const token = c.req.query('token') ?? '';
    if (!verifyPlaybackToken(key, channelId, token)) {
      // Players read the refusal across origins, as they read the files.
      c.header('Access-Control-Allow-Origin', '*');
      return errorResponse(c, new LiveApiError(401, 'a valid playback token is required'));
    }
    await next();
    if (c.res.status !== 200 || !/mpegurl/i.test(c.res.headers.get('content-type') ?? '')) return;
    const playlist = await c.res.text();
    c.res = new Response(withToken(playlist, token), { status: 200, headers: c.res.headers });
  };
}

/** The playlist with `token=` appended to each URI a player fetches from this host. */
export function withToken(playlist: string, token: string): string {
  const append = (uri: string) => `${uri}${uri.includes('?') ? '&' : '?'}token=${token}`;
  return playlist
    .split('\n')
    .map((line) => {
      if (line.trim() === '') return line;
      if (!line.startsWith('#')) return append(line);
      if (/^#EXT-X-(SESSION-)?KEY:/.test(line)) return line;
      return line.replace(/URI="([^"]*)"/g, (_, uri: string) => `URI="${append(uri)}"`);
    })
    .join('\n');
}
