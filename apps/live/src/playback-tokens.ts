import type { MiddlewareHandler } from 'hono';
import type { ChannelRow, ChannelSettings } from '@ukiyo/server';
import { errorResponse, LiveApiError, type LiveEnv } from './api.ts';
import type { PeerSignature } from './hls/peer-signature.ts';
import { CheckedTokens, TOKEN_REQUIRED, TokenSlots } from './playback-token-format.ts';
import type { Db, SecretBox } from './types.ts';

/** The channel's playback key, when its viewers need tokens. */
export function playbackKey(secrets: SecretBox, channel: Pick<ChannelRow, 'settings'>): Buffer | undefined {
  const sealed = (channel.settings as Partial<ChannelSettings>).playbackKeyEnc;
  return sealed ? Buffer.from(secrets.open(sealed), 'hex') : undefined;
}

/** How long a channel's need for tokens is remembered by the HLS check (it never changes). */
const KEY_CACHE_MS = 10_000;

/**
 * Channels' playback keys as the HLS check needs them, briefly remembered, each with the tokens
 * found valid under it (CheckedTokens).
 */
export class PlaybackKeys {
  private readonly keys = new Map<string, { tokens: CheckedTokens | undefined; until: number }>();

  constructor(
    private readonly db: Db,
    private readonly secrets: SecretBox,
  ) {}

  /** The channel's tokens, when its viewers need them. */
  async tokensOf(channelId: string): Promise<CheckedTokens | undefined> {
    const known = this.keys.get(channelId);
    if (known && known.until > Date.now()) return known.tokens;
    const row = await this.db
      .selectFrom('channels')
      .select('settings')
      .where('id', '=', channelId)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    const key = row && playbackKey(this.secrets, row);
    // The same key keeps the tokens found valid (it never changes while the channel lives).
    const tokens = key && (known?.tokens ?? new CheckedTokens(key, channelId));
    // Bounded against scans of ids; expired entries go as they are looked up again.
    if (this.keys.size > 10_000) this.keys.clear();
    this.keys.set(channelId, { tokens, until: Date.now() + KEY_CACHE_MS });
    return tokens;
  }

  /**
   * Whether the channel is known, without asking the database, to need no token: the HLS
   * serving's fast path (hls.ts) takes only such channels' requests and leaves the others,
   * and those of channels not looked up lately, to the check.
   */
  knownOpen(channelId: string, now = Date.now()): boolean {
    const known = this.keys.get(channelId);
    return known !== undefined && known.tokens === undefined && known.until > now;
  }
}

/** Playlist versions whose slots hlsPlaybackTokens keeps before it starts again. */
const MAX_SLOTS_KEPT = 1_000;

/**
 * HLS of channels created with playback_token_required: every playlist and segment request
 * carries `?token=`, and each playlist answered carries it in its URIs (TokenSlots). Every
 * viewer of a version is answered the same text (a session's master playlist, an encrypted
 * channel's media playlist until its next segment), so each version is cut once, found again by
 * its text: 3.6 µs a request for a six-segment LL-HLS playlist, where cutting it each time took
 * 17.6 and rewriting its lines 14.5.
 */
export function hlsPlaybackTokens(
  keys: PlaybackKeys,
  peers: Pick<PeerSignature, 'signedRequest'>,
): MiddlewareHandler<LiveEnv> {
  const slotsByPlaylist = new Map<string, TokenSlots>();
  const slotsOf = (playlist: string) => {
    let slots = slotsByPlaylist.get(playlist);
    if (!slots) {
      if (slotsByPlaylist.size >= MAX_SLOTS_KEPT) slotsByPlaylist.clear();
      slots = new TokenSlots(playlist);
      slotsByPlaylist.set(playlist, slots);
    }
    return slots;
  };
  return async (c, next) => {
    const channelId = c.req.path.split('/')[2] ?? '';
    if (!/^[0-9a-f]{1,64}$/.test(channelId)) return next();
    const tokens = await keys.tokensOf(channelId);
    // Another live process asks without the token: it checked its viewer's (hls.ts peerTarget).
    if (!tokens || peers.signedRequest(c)) return next();
    const token = c.req.query('token') ?? '';
    if (!tokens.valid(token)) {
      // Players read the refusal across origins, as they read the files.
      c.header('Access-Control-Allow-Origin', '*');
      return errorResponse(c, new LiveApiError(401, TOKEN_REQUIRED));
    }
    await next();
    if (c.res.status !== 200 || !/mpegurl/i.test(c.res.headers.get('content-type') ?? '')) return;
    const playlist = slotsOf(await c.res.text()).with(token);
    c.res = new Response(playlist as Uint8Array<ArrayBuffer>, { status: 200, headers: c.res.headers });
  };
}
