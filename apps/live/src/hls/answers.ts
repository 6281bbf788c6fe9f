import type { LowLatencyRendition } from './ll-hls.ts';
import { WaitingCounts } from './waiting-counts.ts';

/** An HTTP answer as the HLS route sends it. */
export interface Answer {
  status: number;
  body: Uint8Array;
  headers: Readonly<Record<string, string>>;
}

/** `_HLS_msn` / `_HLS_part` as a request gives them (unparsed). */
export interface BlockingQuery {
  msn: string | undefined;
  part: string | undefined;
}

const PLAYLIST = 'application/vnd.apple.mpegurl';
/** A client's address and user agent are kept to this many characters (clientOf). */
const MAX_CLIENT_LENGTH = 256;
/** How soon a client the live process has no room for may ask again. */
const RETRY_AFTER_SECONDS = 2;
/** A blocking request waits at most three target durations (RFC 8216bis 6.2.5.2), 10 s segments at most. */
export const MAX_BLOCKING_MS = 3 * 10_000;
/**
 * Requests waiting at once (blocking playlist reloads and preload-hinted parts): a player holds
 * one or two per rendition, so a client (address and user agent) past a few is misbehaving, and
 * a channel's cap bounds the memory of its waiters.
 */
const MAX_WAITING_PER_CLIENT = 8;
const MAX_WAITING_PER_CHANNEL = 5_000;

/** Every answer is read by players on other origins, its timing too. */
export const CROSS_ORIGIN = { 'Access-Control-Allow-Origin': '*', 'Timing-Allow-Origin': '*' } as const;
const IMMUTABLE = 'public, max-age=86400, immutable';
/** Answers' headers, made once rather than per request. */
export const HEADERS = {
  text: { 'Content-Type': 'text/plain; charset=UTF-8', ...CROSS_ORIGIN },
  playlist: { 'Content-Type': PLAYLIST, 'Cache-Control': 'public, max-age=1', ...CROSS_ORIGIN },
  // A blocking reload's URL names one version of the playlist: it may be cached a while.
  blockingPlaylist: { 'Content-Type': PLAYLIST, 'Cache-Control': 'public, max-age=60', ...CROSS_ORIGIN },
  mp4: { 'Content-Type': 'video/mp4', 'Cache-Control': IMMUTABLE, ...CROSS_ORIGIN },
  ts: { 'Content-Type': 'video/mp2t', 'Cache-Control': IMMUTABLE, ...CROSS_ORIGIN },
} as const;

export function text(status: number, message: string): Answer {
  return { status, body: Buffer.from(message), headers: HEADERS.text };
}

export const NOT_FOUND = text(404, 'not found');
export const NO_ROOM: Answer = {
  ...text(503, 'this live server has no room for another HLS viewer now; try again shortly'),
  headers: { ...HEADERS.text, 'Retry-After': String(RETRY_AFTER_SECONDS) },
};

/**
 * The client of a request, its address and user agent: at most MAX_CLIENT_LENGTH characters,
 * since the admitted clients, the viewer counts and usage's distinct clients each keep one per
 * client, and a user agent may be as long as the headers are.
 */
export function clientOf(address: string, userAgent: string | undefined): string {
  return `${address} ${userAgent ?? ''}`.slice(0, MAX_CLIENT_LENGTH);
}

/**
 * Resolves true once `subscribe`'s wake comes (the rendition reached what was asked), false
 * after `timeoutMs`.
 */
function waitFor(subscribe: (wake: () => void) => () => void, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      cancel();
      resolve(false);
    }, timeoutMs);
    const cancel = subscribe(() => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/** `_HLS_msn` / `_HLS_part`: absent, a number, or malformed. */
function directive(value: string | undefined): number | undefined | null {
  if (value === undefined) return undefined;
  return /^[0-9]{1,9}$/.test(value) ? Number(value) : null;
}

/**
 * The requests of one process that wait for something to be produced (LL-HLS blocking reloads,
 * preload-hinted parts, a peer's answer to those), within the caps per client and per channel.
 */
export class HeldRequests {
  private readonly perClient = new WaitingCounts(MAX_WAITING_PER_CLIENT);
  private readonly perChannel = new WaitingCounts(MAX_WAITING_PER_CHANNEL);
  /** Requests waiting now. */
  count = 0;

  /**
   * `wait`'s result, waited for within the caps, else the answer saying why not. A peer (`client`
   * undefined) has no cap of its own: it asks once per file, however many of its viewers wait
   * (PeerCache), and caps them itself.
   */
  async capped<T>(
    channelId: string,
    client: string | undefined,
    wait: () => Promise<T>,
  ): Promise<T | Answer> {
    if (!this.perChannel.take(channelId)) return text(429, 'too many waiting requests for this channel');
    if (client !== undefined && !this.perClient.take(client)) {
      this.perChannel.release(channelId);
      return text(429, 'too many waiting requests from this client');
    }
    this.count++;
    try {
      return await wait();
    } finally {
      this.count--;
      if (client !== undefined) this.perClient.release(client);
      this.perChannel.release(channelId);
    }
  }

  /**
   * Waits, within the caps, for `subscribe`'s wake (the caller checked it is not there yet):
   * undefined once it comes, else the answer saying why not.
   */
  hold(
    channelId: string,
    client: string | undefined,
    subscribe: (wake: () => void) => () => void,
    timeoutMs: number,
  ): Promise<Answer | undefined> {
    return this.capped(channelId, client, async () =>
      (await waitFor(subscribe, timeoutMs)) ? undefined : text(503, 'not produced in time'),
    );
  }
}

/**
 * A file of an LL-HLS rendition from memory, as `{index}/{name}` asks it (index.m3u8, init.mp4,
 * part{n}.m4s, seg{msn}.m4s): a 200 with its headers, the answer saying why not, or undefined
 * when the rendition has no such file. The playlist blocks until `_HLS_msn` / `_HLS_part` when
 * asked (RFC 8216bis 6.2.5.2), and the preload-hinted part is sent as soon as it exists; `client`
 * is undefined for a peer's request (HeldRequests).
 */
export async function lowLatencyAnswer(
  held: HeldRequests,
  channelId: string,
  client: string | undefined,
  rendition: LowLatencyRendition,
  name: string,
  query: BlockingQuery,
  targetDuration: number,
): Promise<Answer | undefined> {
  const found =
    name === 'index.m3u8'
      ? await playlist(held, channelId, client, rendition, query, targetDuration)
      : await file(held, channelId, client, rendition, name);
  if (!found || !(found instanceof Uint8Array)) return found;
  const headers =
    name !== 'index.m3u8'
      ? HEADERS.mp4
      : query.msn === undefined
        ? HEADERS.playlist
        : HEADERS.blockingPlaylist;
  return { status: 200, body: found, headers };
}

async function playlist(
  held: HeldRequests,
  channelId: string,
  client: string | undefined,
  rendition: LowLatencyRendition,
  query: BlockingQuery,
  targetDuration: number,
): Promise<Answer | Uint8Array | undefined> {
  const msn = directive(query.msn);
  const part = directive(query.part);
  if (msn === null || part === null || (part !== undefined && msn === undefined))
    return text(400, '_HLS_msn and _HLS_part are numbers, and _HLS_part needs _HLS_msn');
  if (msn !== undefined) {
    const newest = rendition.position?.msn ?? -1;
    if (msn > newest + 2) return text(400, '_HLS_msn is more than two segments ahead of the playlist');
  }
  if (msn !== undefined && !rendition.reached(msn, part)) {
    const refused = await held.hold(
      channelId,
      client,
      (wake) => rendition.whenReached(msn, part, wake),
      3 * targetDuration * 1000,
    );
    if (refused) return refused;
  }
  return rendition.playlistBytes();
}

async function file(
  held: HeldRequests,
  channelId: string,
  client: string | undefined,
  rendition: LowLatencyRendition,
  name: string,
): Promise<Answer | Uint8Array | undefined> {
  if (name === 'init.mp4') return rendition.initSegment;
  const segment = /^seg([0-9]+)\.m4s$/.exec(name);
  if (segment) return rendition.segment(Number(segment[1]));
  const part = Number(/^part([0-9]+)\.m4s$/.exec(name)?.[1]);
  // The preload-hinted part is asked for before it exists: it is sent as soon as it does.
  if (part === rendition.hintedPart) {
    const refused = await held.hold(
      channelId,
      client,
      (wake) => rendition.whenPart(part, wake),
      MAX_BLOCKING_MS,
    );
    if (refused) return refused;
  }
  return rendition.part(part);
}
