import { createHmac, timingSafeEqual } from 'node:crypto';

// What a playback token is, apart from where keys come from: the viewer processes check tokens
// and rewrite playlists with this module alone (it loads nothing of the live API).

/** The refusal of a viewer without a valid token (the error body's message). */
export const TOKEN_REQUIRED = 'a valid playback token is required';

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

/** Tokens a CheckedTokens keeps before it starts again: more than a channel has viewers here. */
const MAX_CHECKED = 10_000;

/**
 * One channel's tokens found valid, until they expire: a viewer sends its token with each of
 * about six requests a second, and checking its signature cost more than answering.
 */
export class CheckedTokens {
  /** Valid tokens and when each expires (ms). */
  private readonly known = new Map<string, number>();

  constructor(
    private readonly key: Buffer,
    private readonly channelId: string,
  ) {}

  valid(token: string, now = Date.now()): boolean {
    const expiresAt = this.known.get(token);
    if (expiresAt !== undefined) return expiresAt > now;
    if (!verifyPlaybackToken(this.key, this.channelId, token, now)) return false;
    if (this.known.size >= MAX_CHECKED) this.known.clear();
    this.known.set(token, Number(token.slice(0, token.indexOf('.'))) * 1000);
    return true;
  }
}

/**
 * A playlist cut where a token goes: after each URI a player fetches from this host, the URI
 * lines and the URI attributes of its tags (RFC 8216 4.1), but not EXT-X-KEY's, which is the
 * customer's key server. hls.js and other players resolve a playlist's relative URIs without its
 * query, so each playlist answered carries the token in its URIs; its text is otherwise left as
 * the packager wrote it. One version of a playlist, answered to every viewer, is cut once.
 */
export class TokenSlots {
  /** The text around the slots, encoded: one more piece than slots. */
  private readonly pieces: Buffer[] = [];
  /** Each slot's separator: `&` after a URI with a query of its own. */
  private readonly separators: ('?' | '&')[] = [];

  constructor(playlist: string) {
    let from = 0;
    const slot = (at: number, uri: string) => {
      this.pieces.push(Buffer.from(playlist.slice(from, at)));
      this.separators.push(uri.includes('?') ? '&' : '?');
      from = at;
    };
    let lineStart = 0;
    for (const line of playlist.split('\n')) {
      if (line.trim() !== '' && !line.startsWith('#')) slot(lineStart + line.length, line);
      else if (line.startsWith('#') && !/^#EXT-X-(SESSION-)?KEY:/.test(line))
        for (const { index, 1: uri } of line.matchAll(/URI="([^"]*)"/g))
          slot(lineStart + index + 'URI="'.length + uri!.length, uri!);
      lineStart += line.length + 1;
    }
    this.pieces.push(Buffer.from(playlist.slice(from)));
  }

  /** The playlist with `token=` in every slot. */
  with(token: string): Buffer {
    const suffixes = { '?': Buffer.from(`?token=${token}`), '&': Buffer.from(`&token=${token}`) };
    const joined = [this.pieces[0]!];
    this.separators.forEach((separator, slot) => joined.push(suffixes[separator], this.pieces[slot + 1]!));
    return Buffer.concat(joined);
  }
}
