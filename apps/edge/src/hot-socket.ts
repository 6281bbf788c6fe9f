import { Server, type IncomingMessage, type ServerOptions, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { Duplex } from 'node:stream';
import { dateLine, isWholeRequest, parseRequestHead, writeAnswer } from '@ukiyo/server/request-head';

/**
 * What a cache hit reads of a request (EdgeHandler.answerFromMemory); the rest of the head
 * does not change its answer.
 */
export interface HitRequest {
  method: string | undefined;
  url: string | undefined;
  host: string | undefined;
  accept: string | undefined;
  ifNoneMatch: string | undefined;
  signature: string | undefined;
  forwardedFor: string | undefined;
  requestId: string | undefined;
  remoteAddress: string | undefined;
  /** The name a TLS connection's handshake was for (serverNameOf). */
  servername: string | undefined;
}

/** An answer from memory, framed by the hot path. */
export interface HotResponse {
  status: 200 | 304;
  /** Header lines, each ending in CRLF; no framing headers (Date, Connection, Content-Length). */
  headers: string;
  /** The body, or its length alone for HEAD and 304 (not sent). */
  body: Buffer;
  bodyless: boolean;
}

/** Undefined: the request needs the full path. */
export type HotAnswer = (request: HitRequest) => HotResponse | undefined;

const HEAD_END = Buffer.from('\r\n\r\n');
/** Larger heads go to node:http, whose limit (16 KiB) and timeouts then apply. */
const MAX_HEAD_BYTES = 8 * 1024;
/** Answers written but not yet taken by the client; past it node:http's flow control takes over. */
const MAX_UNSENT_BYTES = 1024 * 1024;
/** The headers a hit reads, by name. */
const HIT_FIELDS = new Map<
  string,
  'host' | 'accept' | 'ifNoneMatch' | 'signature' | 'forwardedFor' | 'requestId'
>([
  ['host', 'host'],
  ['accept', 'accept'],
  ['if-none-match', 'ifNoneMatch'],
  ['x-imageflux-signature', 'signature'],
  ['x-forwarded-for', 'forwardedFor'],
  ['x-request-id', 'requestId'],
]);
/** A request head (without its blank line) as a hit may answer it, with one Host (parseRequestHead), or undefined. */
export function parseHead(
  head: string,
  remoteAddress: string | undefined,
  servername?: string,
): HitRequest | undefined {
  const parsed = parseRequestHead(head, HIT_FIELDS);
  if (parsed?.fields.host === undefined) return undefined;
  const { host, accept, ifNoneMatch, signature, forwardedFor, requestId } = parsed.fields;
  return {
    method: parsed.method,
    url: parsed.url,
    host,
    accept,
    ifNoneMatch,
    signature,
    forwardedFor,
    requestId,
    remoteAddress,
    servername,
  };
}

const REQUEST_TIMEOUT = 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n';

const STATUS_LINE = { 200: 'HTTP/1.1 200 OK\r\n', 304: 'HTTP/1.1 304 Not Modified\r\n' };

/**
 * node:http with cache hits answered on the socket (issue 21). Each chunk a connection sends
 * is read as whole request heads, and a hit is written from memory with no request or response
 * objects, no header validation and no parser. Any other request goes to node:http through the
 * connection's HttpSide; while node:http has requests in hand the hot path passes it the later
 * ones too, so answers keep their order, and reads the next hit itself once node:http is done.
 * A head split across chunks (one larger than a TCP segment: cookies) is held until its end
 * comes, for as long as node:http would wait for it (headersTimeout, or the idle timeout
 * without a byte; then 408). What the hot path cannot
 * count as whole requests (a body, an upgrade, bytes node:http may read otherwise, a head over
 * MAX_HEAD_BYTES, a client not reading its answers) gives the rest of the connection to
 * node:http. The hot path only ever answers what node:http would answer the same
 * (test/hit-path.int.test.ts).
 */
export class HotPathServer extends Server {
  /** Connections node:http has not been given (it drains those it has). */
  private readonly hotOnly = new Set<Socket>();
  private readonly framing: string;

  constructor(
    options: ServerOptions,
    listener: (req: IncomingMessage, res: ServerResponse) => void,
    private readonly answer: HotAnswer,
  ) {
    super(options, (req, res) => {
      const side: unknown = req.socket;
      if (side instanceof HttpSide) res.once('close', () => side.pending--);
      listener(req, res);
    });
    const [toHttp] = this.listeners('connection') as [(side: HttpSide) => void];
    this.removeAllListeners('connection');
    this.on('connection', (socket: Socket) => this.accept(socket, (side) => toHttp.call(this, side)));
    this.framing = `Connection: keep-alive\r\nKeep-Alive: timeout=${Math.floor(this.keepAliveTimeout / 1000)}\r\n`;
  }

  override closeIdleConnections(): void {
    // node:http destroys those it holds a request of no longer; between chunks the hot path
    // holds nothing (its answers are written).
    super.closeIdleConnections();
    for (const socket of this.hotOnly) socket.end();
  }

  override closeAllConnections(): void {
    super.closeAllConnections();
    for (const socket of this.hotOnly) socket.destroy();
  }

  private accept(socket: Socket, toHttp: (side: HttpSide) => void): void {
    this.hotOnly.add(socket);
    const servername = serverNameOf(socket);
    let side: HttpSide | undefined;
    /** node:http reads everything from now on. */
    let httpOnly = false;
    const pass = (bytes: Buffer, requests: number) => {
      if (!side) {
        this.hotOnly.delete(socket);
        toHttp((side = new HttpSide(socket)));
      }
      side.pending += requests;
      if (!side.push(bytes)) socket.pause();
    };
    /** The start of a head whose end a later chunk brings (a large head in TCP segments). */
    let held: Buffer | undefined;
    let heldSince = 0;
    /** As node:http answers a head it waited too long for: 408 unless it is mid-answer. */
    const headTimedOut = () => {
      if (!side?.pending) socket.write(REQUEST_TIMEOUT);
      socket.destroy();
    };
    socket.on('data', (data: Buffer) => {
      const continued = held;
      const timeout = this.headersTimeout;
      // headersTimeout 0 sets no limit.
      if (continued && timeout > 0 && Date.now() - heldSince > timeout) return headTimedOut();
      const chunk = continued ? Buffer.concat([continued, data]) : data;
      held = undefined;
      let at = 0;
      while (!httpOnly && at < chunk.length && socket.writableLength <= MAX_UNSENT_BYTES) {
        const end = chunk.indexOf(HEAD_END, at);
        if (end < 0 && chunk.length - at <= MAX_HEAD_BYTES) {
          // The head held before keeps its start time; a copy, as the chunk may be 64 KiB.
          if (!continued || at > 0) heldSince = Date.now();
          held = Buffer.from(chunk.subarray(at));
          at = chunk.length;
          break;
        }
        if (end < 0 || end - at > MAX_HEAD_BYTES) break;
        const head = chunk.toString('latin1', at, end);
        const request = side?.pending ? undefined : parseHead(head, socket.remoteAddress, servername);
        const response = request && this.answer(request);
        const next = end + HEAD_END.length;
        if (response) this.write(socket, response);
        else if (isWholeRequest(head)) pass(chunk.subarray(at, next), 1);
        else break;
        at = next;
      }
      if (at < chunk.length) {
        httpOnly = true;
        pass(chunk.subarray(at), 0);
      }
    });
    // The server allows half-open connections: node:http ends them itself, and so does this.
    socket.on('end', () => {
      if (held) pass(held, 0);
      return side ? side.push(null) : socket.end();
    });
    socket.on('error', () => socket.destroy());
    socket.on('timeout', () => (held ? headTimedOut() : socket.destroy()));
    socket.once('close', () => {
      this.hotOnly.delete(socket);
      side?.destroy();
    });
    socket.setTimeout(this.keepAliveTimeout);
  }

  private write(socket: Socket, { status, headers, body, bodyless }: HotResponse): void {
    const head =
      STATUS_LINE[status] +
      headers +
      dateLine() +
      this.framing +
      (status === 304 ? '\r\n' : `Content-Length: ${body.length}\r\n\r\n`);
    if (bodyless) {
      socket.write(head, 'latin1');
      return;
    }
    writeAnswer(socket, head, body);
  }
}

/**
 * node:http's end of a connection the hot path shares with it (node:http takes any Duplex as a
 * connection): it reads what the hot path passes on and writes to the socket, after the hot
 * path's answers. It has no setTimeout, so node:http sets no keep-alive timer of its own: the
 * socket's idle timeout covers both.
 */
class HttpSide extends Duplex {
  /** Requests passed on and not yet answered; the hot path waits for none. */
  pending = 0;

  constructor(private readonly socket: Socket) {
    super({ allowHalfOpen: true });
  }

  get remoteAddress() {
    return this.socket.remoteAddress;
  }

  get remotePort() {
    return this.socket.remotePort;
  }

  get remoteFamily() {
    return this.socket.remoteFamily;
  }

  get localAddress() {
    return this.socket.localAddress;
  }

  get localPort() {
    return this.socket.localPort;
  }

  get encrypted() {
    return serverNameOf(this.socket) !== undefined;
  }

  get servername() {
    return serverNameOf(this.socket);
  }

  override _read(): void {
    this.socket.resume();
  }

  override _write(chunk: Buffer, encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.socket.write(chunk, encoding, callback);
  }

  override _writev(
    chunks: Array<{ chunk: Buffer; encoding: BufferEncoding }>,
    callback: (error?: Error | null) => void,
  ): void {
    this.socket.cork();
    chunks.forEach(({ chunk, encoding }, index) =>
      this.socket.write(chunk, encoding, index === chunks.length - 1 ? callback : undefined),
    );
    this.socket.uncork();
  }

  override _final(callback: () => void): void {
    this.socket.end();
    callback();
  }

  override _destroy(error: Error | null, callback: (error: Error | null) => void): void {
    this.socket.destroy();
    callback(error);
  }
}

/**
 * The name a TLS connection's handshake was for ('' without one: no Host matches it); undefined
 * for a plain connection.
 */
export function serverNameOf(socket: unknown): string | undefined {
  const { encrypted, servername } = socket as { encrypted?: unknown; servername?: unknown };
  if (encrypted !== true) return undefined;
  return typeof servername === 'string' ? servername : '';
}
