import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { addressOf, dateLine, parseRequestHead, writeAnswer } from '@ukiyo/server/request-head';
import {
  type Answer,
  type BlockingQuery,
  clientOf,
  CROSS_ORIGIN,
  HeldRequests,
  lowLatencyAnswer,
  NO_ROOM,
  NOT_FOUND,
} from '../hls/answers.ts';
import { LowLatencyRendition, type LowLatencyOptions } from '../hls/ll-hls.ts';
import { PEER_HEADER } from '../hls/peer-signature.ts';
import { CheckedTokens, TOKEN_REQUIRED, TokenSlots } from '../playback-token-format.ts';
import { HlsAdmission } from './hls-admission.ts';
import { LoadGuard } from './load-guard.ts';

/** How a viewer process serves LL-HLS (the live process's own settings for its main thread). */
export interface HlsServingSettings {
  /** LIVE_MAX_EVENT_LOOP_UTILIZATION. */
  maxLoad: number;
  loadWindowMs: number;
  /** A client quiet this long is forgotten by admission (the viewer window). */
  quietMs: number;
  admissionWaitMs: number;
  /** TRUST_PROXY: the client's address is X-Forwarded-For's last entry. */
  trustProxy: boolean;
  /** An idle kept-alive connection is closed after this long, as node:http closes its own. */
  keepAliveMs: number;
}

/** One LL-HLS rendition of the live process's, mirrored from its first byte. */
export interface MirroredRendition {
  /** `{channel_id}/{connection_id}/{index}`, as its files' paths name it. */
  key: string;
  channelId: string;
  connectionId: string;
  organizationId: number;
  targetDuration: number;
  options: LowLatencyOptions;
  /** The channel's playback key (hex), when its viewers need playback tokens. */
  playbackKey?: string;
}

/** What the live process sends about HLS (beside ToViewerProcess's WebRTC messages). */
export type ToHlsServing =
  | { type: 'hls-open'; rendition: MirroredRendition }
  /** ffmpeg's next fMP4 bytes of a rendition; null: its stream ended. */
  | { type: 'hls-bytes'; key: string; bytes: Uint8Array | null }
  /** The channel's renditions are served here no more (it is gone). */
  | { type: 'hls-forget'; channelId: string }
  /** What was answered, reported now (usage is written, or the live process closes). */
  | { type: 'hls-report' }
  /** A viewer's connection (the socket sent with it), and the bytes read of it. */
  | { type: 'hls-connection'; head: Uint8Array }
  /**
   * The live process stops: each connection closes once the answer in hand is written (an idle
   * one at once), and those still open after `graceMs` are cut.
   */
  | { type: 'hls-drain'; graceMs: number };

/** A channel's HLS delivery answered here since the last report. */
export interface ServedChannel {
  channelId: string;
  organizationId: number;
  requests: number;
  bytes: number;
  /** Every client answered a 200 (usage's distinct clients). */
  clients: string[];
  /** The clients answered a playlist (the live process's viewer count). */
  watching: string[];
}

/** What a viewer process answered since its last report, and its HLS state now. */
export interface HlsServedReport {
  channels: ServedChannel[];
  /** Answers by file kind and status. */
  answers: { kind: 'playlist' | 'segment'; status: number; count: number }[];
  /** Each answer's time, seconds. */
  durations: number[];
  refused: number;
  shed: number;
  /** Now: requests held, new clients waiting for room. */
  held: number;
  waiting: number;
}

export function isHlsMessage(message: { type: string }): message is ToHlsServing {
  return message.type.startsWith('hls-');
}

export type FromHlsServing =
  | { type: 'hls-served'; report: HlsServedReport }
  /** A connection given back (the socket sent with it), and the bytes read of it not answered. */
  | { type: 'hls-return'; head: Uint8Array }
  /** Draining, every connection has closed. */
  | { type: 'hls-drained' };

/** How often a viewer process reports what it served. */
const HLS_REPORT_MS = 1_000;
const HEAD_END = Buffer.from('\r\n\r\n');
/** Larger heads go back to node:http, whose limit and timeouts then apply. */
const MAX_HEAD_BYTES = 8 * 1024;
/** A head not whole this long after it began is given no more time (node:http's headersTimeout). */
const HEAD_TIMEOUT_MS = 60_000;
/** Answers written but not yet taken by the client, past which the next request waits. */
const MAX_UNSENT_BYTES = 1024 * 1024;
/** Clients kept per channel per report: usage bounds its distinct clients too. */
const MAX_CLIENTS_PER_REPORT = 10_000;
/** As the live process's HLS route refuses a viewer without a valid playback token. */
const TOKEN_REFUSED: Answer = {
  status: 401,
  body: Buffer.from(JSON.stringify({ ok: false, error: TOKEN_REQUIRED })),
  headers: { 'Content-Type': 'application/json', ...CROSS_ORIGIN },
};
const FIELDS = new Map<string, 'userAgent' | 'forwardedFor' | 'peer'>([
  ['user-agent', 'userAgent'],
  ['x-forwarded-for', 'forwardedFor'],
  [PEER_HEADER, 'peer'],
]);
/** A file of an LL-HLS rendition: `{key}/{name}` and the query. */
const RENDITION_FILE =
  /^\/hls\/([0-9a-f]{1,64}\/[0-9a-f]{1,64}\/[0-9]{1,2})\/(index\.m3u8|init\.mp4|part[0-9]{1,9}\.m4s|seg[0-9]{1,9}\.m4s)(?:\?(.*))?$/;

/**
 * A GET of an LL-HLS rendition's file, as this path reads a raw request head (without its blank
 * line): the rendition's key, the file, the query and the client; undefined for anything else
 * (a peer's request, a HEAD, a head parseRequestHead leaves to node:http).
 */
export function renditionRequestOf(
  head: string,
  remoteAddress: string | undefined,
  trustProxy: boolean,
): { key: string; name: string; search: string | undefined; client: string } | undefined {
  const parsed = parseRequestHead(head, FIELDS);
  if (!parsed || parsed.method !== 'GET' || parsed.fields.peer !== undefined) return undefined;
  const match = RENDITION_FILE.exec(parsed.url);
  if (!match) return undefined;
  const address = addressOf(parsed.fields.forwardedFor, remoteAddress, { TRUST_PROXY: trustProxy });
  return {
    key: match[1]!,
    name: match[2]!,
    search: match[3],
    client: clientOf(address, parsed.fields.userAgent),
  };
}

interface Mirror {
  rendition: LowLatencyRendition;
  opening: MirroredRendition;
  /** When the channel's viewers need playback tokens. */
  tokens: CheckedTokens | undefined;
}

/** The slots of each playlist version answered to a token-protected channel's viewers. */
const playlistSlots = new WeakMap<Uint8Array, TokenSlots>();

/** `playlist`'s TokenSlots, cut once per version (every viewer is answered the same bytes). */
function tokenSlotsOf(playlist: Uint8Array): TokenSlots {
  let slots = playlistSlots.get(playlist);
  if (!slots) {
    slots = new TokenSlots(Buffer.from(playlist).toString());
    playlistSlots.set(playlist, slots);
  }
  return slots;
}

/** A request this process answers. */
interface HlsRequest {
  mirror: Mirror;
  name: string;
  client: string;
  query: BlockingQuery;
  /** `?token=`, the playback token, as the request gives it. */
  token: string | undefined;
}

/** Resolves once what was written to `socket` is sent, or it closed. */
function drained(socket: Socket): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      socket.off('drain', done);
      socket.off('close', done);
      resolve();
    };
    socket.once('drain', done);
    socket.once('close', done);
  });
}

/** The headers of an answer as written, made once per headers object (they are shared). */
const headerLines = new WeakMap<object, string>();

function linesOf(headers: Readonly<Record<string, string>>): string {
  let lines = headerLines.get(headers);
  if (lines === undefined) {
    lines = Object.entries(headers)
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('');
    headerLines.set(headers, lines);
  }
  return lines;
}

/**
 * LL-HLS answered in a viewer process (issue 16): the live process's main thread alone answered
 * about 1,700 clients on a 2-core machine, so it mirrors each unencrypted rendition into the
 * viewer processes (its fMP4 bytes, packaged here by the same LowLatencyRendition, so parts and
 * playlists are identical) and hands them viewers' connections whose first request is such a
 * rendition's file (hls-handoff.ts). Each connection's requests are read here as raw HTTP/1.1
 * heads (parseRequestHead) and answered as hls.ts answers them, admitted by this process's own
 * load (HlsAdmission over its event loop), a channel's playback tokens checked with its key.
 * Anything else on the connection (another path, a HEAD, a peer's request, a head this path
 * does not read) gives the connection back to the live process with the bytes read, once its
 * answers are written. Deliveries are counted here and reported every HLS_REPORT_MS.
 */
export class HlsServing {
  private readonly mirrors = new Map<string, Mirror>();
  private readonly held = new HeldRequests();
  private readonly admission: HlsAdmission;
  /** What the report will say of each channel, its clients as sets. */
  private served = new Map<
    string,
    Omit<ServedChannel, 'clients' | 'watching'> & { clients: Set<string>; watching: Set<string> }
  >();
  private answers = new Map<string, { kind: 'playlist' | 'segment'; status: number; count: number }>();
  private durations: number[] = [];
  private refused = 0;
  private shed = 0;
  /** The connections answered here, each with what closes it if no answer is in hand. */
  private readonly connections = new Map<Socket, () => void>();
  private draining = false;

  constructor(
    private readonly settings: HlsServingSettings,
    private readonly report: (message: FromHlsServing) => void,
    private readonly giveBack: (head: Uint8Array, socket: Socket) => void,
  ) {
    this.admission = new HlsAdmission(
      new LoadGuard(settings.maxLoad, settings.loadWindowMs),
      settings.quietMs,
      settings.admissionWaitMs,
      (count) => (this.shed += count),
    );
    // The process lives as long as its IPC channel: the reports need not keep it alive.
    setInterval(() => this.sendReport(), HLS_REPORT_MS).unref();
  }

  receive(message: ToHlsServing, socket: Socket | undefined): void {
    switch (message.type) {
      case 'hls-open': {
        const { rendition } = message;
        // A channel's new session: its earlier one is served here no more.
        this.forget(rendition.channelId, rendition.connectionId);
        this.mirrors.set(rendition.key, {
          rendition: new LowLatencyRendition(rendition.options),
          opening: rendition,
          tokens:
            rendition.playbackKey === undefined
              ? undefined
              : new CheckedTokens(Buffer.from(rendition.playbackKey, 'hex'), rendition.channelId),
        });
        break;
      }
      case 'hls-bytes': {
        const mirror = this.mirrors.get(message.key);
        if (message.bytes === null) mirror?.rendition.end();
        else {
          const { buffer, byteOffset, byteLength } = message.bytes;
          try {
            mirror?.rendition.push(Buffer.from(buffer, byteOffset, byteLength));
          } catch {
            // The live process's own packager threw on the same bytes and ends the session.
          }
        }
        break;
      }
      case 'hls-forget':
        this.forget(message.channelId);
        break;
      case 'hls-report':
        this.sendReport();
        break;
      case 'hls-connection':
        if (socket) this.accept(socket, Buffer.from(message.head));
        break;
      case 'hls-drain':
        this.drain(message.graceMs);
        break;
    }
  }

  private drain(graceMs: number): void {
    this.draining = true;
    for (const closeIfIdle of this.connections.values()) closeIfIdle();
    setTimeout(() => {
      for (const socket of this.connections.keys()) socket.destroy();
    }, graceMs).unref();
    this.drainedIfNoneOpen();
  }

  private drainedIfNoneOpen(): void {
    if (this.draining && this.connections.size === 0) this.report({ type: 'hls-drained' });
  }

  /** Drops the channel's renditions, but those of the session `keeping`. */
  private forget(channelId: string, keeping?: string): void {
    for (const [key, mirror] of this.mirrors)
      if (mirror.opening.channelId === channelId && mirror.opening.connectionId !== keeping) {
        // Requests held on it are answered (an ended rendition reaches everything).
        mirror.rendition.end();
        this.mirrors.delete(key);
      }
  }

  private accept(socket: Socket, head: Buffer): void {
    socket.on('error', () => socket.destroy());
    socket.on('timeout', () => socket.destroy());
    socket.setNoDelay(true);
    let unread = head;
    let answering = false;
    let gone = false;
    /** When the head read in part began to come (a head trickling in is cut off). */
    let headSince: number | undefined;
    const readOn = async () => {
      answering = true;
      socket.pause();
      socket.setTimeout(0);
      for (;;) {
        const end = unread.indexOf(HEAD_END);
        if (end < 0) {
          if (unread.length === 0) headSince = undefined;
          else if (unread.length <= MAX_HEAD_BYTES) headSince ??= Date.now();
          else return this.handBack(socket, unread);
          break;
        }
        headSince = undefined;
        const request =
          end <= MAX_HEAD_BYTES ? this.requestOf(unread.toString('latin1', 0, end), socket) : undefined;
        if (!request) return this.handBack(socket, unread);
        unread = unread.subarray(end + HEAD_END.length);
        const answer = await this.answer(request);
        if (gone) return;
        this.write(socket, answer);
        // Its answer says the connection closes (write): the rest read is left unanswered.
        if (this.draining) return void socket.end();
        // A client that does not read its answers gets no more until it does.
        if (socket.writableLength > MAX_UNSENT_BYTES) await drained(socket);
      }
      answering = false;
      if (this.draining) return void socket.end();
      socket.setTimeout(this.settings.keepAliveMs);
      socket.resume();
    };
    this.connections.set(socket, () => {
      if (!answering) socket.end();
    });
    socket.on('data', (chunk: Buffer) => {
      if (headSince !== undefined && Date.now() - headSince > HEAD_TIMEOUT_MS) return socket.destroy();
      unread = unread.length ? Buffer.concat([unread, chunk]) : chunk;
      if (!answering) void readOn();
    });
    socket.once('close', () => {
      gone = true;
      this.connections.delete(socket);
      this.drainedIfNoneOpen();
    });
    // The server allows half-open connections; a client done asking is done.
    socket.on('end', () => {
      if (!answering) socket.end();
    });
    void readOn();
  }

  /** A request of a mirrored rendition's file that this process may answer, else undefined. */
  private requestOf(head: string, socket: Socket): HlsRequest | undefined {
    const request = renditionRequestOf(head, socket.remoteAddress, this.settings.trustProxy);
    const mirror = request && this.mirrors.get(request.key);
    if (!mirror) return undefined;
    const query = request.search === undefined ? undefined : new URLSearchParams(request.search);
    return {
      mirror,
      name: request.name,
      client: request.client,
      query: { msn: query?.get('_HLS_msn') ?? undefined, part: query?.get('_HLS_part') ?? undefined },
      token: query?.get('token') ?? undefined,
    };
  }

  /** Answers and counts one request, as hls.ts's serve does for the live process's own. */
  private async answer({ mirror, name, client, query, token }: HlsRequest): Promise<Answer> {
    const started = performance.now();
    const { channelId, organizationId } = mirror.opening;
    const { tokens } = mirror;
    let answer: Answer;
    if (tokens && !tokens.valid(token ?? '')) answer = TOKEN_REFUSED;
    else if (!(await this.admission.admit({ organizationId, channelId }, client))) {
      this.refused++;
      answer = NO_ROOM;
    } else {
      answer =
        (await lowLatencyAnswer(
          this.held,
          channelId,
          client,
          mirror.rendition,
          name,
          query,
          mirror.opening.targetDuration,
        )) ?? NOT_FOUND;
    }
    const kind = name === 'index.m3u8' ? 'playlist' : 'segment';
    if (tokens && kind === 'playlist' && answer.status === 200)
      answer = { ...answer, body: tokenSlotsOf(answer.body).with(token!) };
    if (answer.status === 200) {
      let channel = this.served.get(channelId);
      if (!channel) {
        channel = {
          channelId,
          organizationId,
          requests: 0,
          bytes: 0,
          clients: new Set(),
          watching: new Set(),
        };
        this.served.set(channelId, channel);
      }
      channel.requests++;
      channel.bytes += answer.body.length;
      if (channel.clients.size < MAX_CLIENTS_PER_REPORT) channel.clients.add(client);
      if (kind === 'playlist' && channel.watching.size < MAX_CLIENTS_PER_REPORT) channel.watching.add(client);
    }
    const counted = `${kind} ${answer.status}`;
    const count = this.answers.get(counted);
    if (count) count.count++;
    else this.answers.set(counted, { kind, status: answer.status, count: 1 });
    this.durations.push((performance.now() - started) / 1000);
    return answer;
  }

  private write(socket: Socket, { status, headers, body }: Answer): void {
    const connection = this.draining
      ? 'Connection: close\r\n'
      : `Connection: keep-alive\r\nKeep-Alive: timeout=${Math.floor(this.settings.keepAliveMs / 1000)}\r\n`;
    const head =
      `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n${linesOf(headers)}${dateLine()}` +
      `${connection}Content-Length: ${body.length}\r\n\r\n`;
    writeAnswer(socket, head, body);
  }

  /** Gives the connection back once what was answered on it is written. */
  private async handBack(socket: Socket, unread: Buffer): Promise<void> {
    socket.pause();
    if (socket.writableLength > 0) await drained(socket);
    if (socket.destroyed) return;
    socket.removeAllListeners('data');
    this.giveBack(new Uint8Array(unread), socket);
    // Sending took the socket's handle: what is left here is closed.
    socket.destroy();
  }

  private sendReport(): void {
    const report: HlsServedReport = {
      channels: [...this.served.values()].map((channel) => ({
        ...channel,
        clients: [...channel.clients],
        watching: [...channel.watching],
      })),
      answers: [...this.answers.values()],
      durations: this.durations,
      refused: this.refused,
      shed: this.shed,
      held: this.held.count,
      waiting: this.admission.waitingCount,
    };
    this.served = new Map();
    this.answers = new Map();
    this.durations = [];
    this.refused = 0;
    this.shed = 0;
    this.report({ type: 'hls-served', report });
  }
}
