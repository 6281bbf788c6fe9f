// Reading HTTP/1.1 request heads, and writing answers, on a raw socket: for the paths that answer
// without node:http (the edge's cache hits, the live viewer processes' LL-HLS). Only a strict
// subset is read, and anything else is left to node:http. No dependency beyond the config's type
// and node:net's, so that a child process can load it alone.
import type { Socket } from 'node:net';
import type { Config } from '../config.ts';

/** The client's address from a request's X-Forwarded-For (trusted with TRUST_PROXY) or socket. */
export function addressOf(
  forwardedFor: string | undefined,
  remote: string | undefined,
  config: Pick<Config, 'TRUST_PROXY'>,
): string {
  if (config.TRUST_PROXY) {
    // The last entry is the one our own proxy appended; earlier ones are the client's word.
    const forwarded = forwardedFor?.split(',').at(-1)?.trim();
    if (forwarded) return forwarded;
  }
  return remote ?? '';
}

/** A request head as parseRequestHead reads it: the headers asked for, by the caller's names. */
export interface RequestHead<Field extends string> {
  method: 'GET' | 'HEAD';
  url: string;
  fields: { [name in Field]?: string };
}

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/**
 * Anything but printable ASCII, tab and CRLF line ends (a lone CR or LF included) is for
 * node:http to judge.
 */
const ODD = /[^\t\r\n\x20-\x7e]|\r(?!\n)|(?<!\r)\n/;
const VERSION = ' HTTP/1.1';
/** Headers that take a request off a raw path: a body, or another protocol. */
const NOT_RAW = new Set(['content-length', 'transfer-encoding', 'upgrade', 'expect']);

/**
 * A request head (without its blank line) as a raw path may answer it, or undefined. Only a
 * strict subset of HTTP/1.1 qualifies: GET or HEAD of an origin-form target, no body, no
 * upgrade, no Connection but keep-alive, none of the headers in `fields` twice. `fields` maps
 * the lowercase names read to the caller's. The values are what node:http would give (trimmed,
 * latin1), so a memo made from node:http's request matches exactly the heads that mean the same
 * request. A scan rather than a general parser: it runs for every request of such a path.
 */
export function parseRequestHead<Field extends string>(
  head: string,
  fields: ReadonlyMap<string, Field>,
): RequestHead<Field> | undefined {
  if (ODD.test(head)) return undefined;
  const method = head.startsWith('GET /') ? 'GET' : head.startsWith('HEAD /') ? 'HEAD' : undefined;
  if (!method) return undefined;
  const requestLineEnd = head.indexOf('\r\n');
  const targetEnd = requestLineEnd - VERSION.length;
  if (requestLineEnd < 0 || head.indexOf(' ', method.length + 1) !== targetEnd) return undefined;
  if (!head.startsWith(VERSION, targetEnd)) return undefined;
  const request: RequestHead<Field> = { method, url: head.slice(method.length + 1, targetEnd), fields: {} };
  for (let start = requestLineEnd + 2; start < head.length;) {
    let end = head.indexOf('\r\n', start);
    if (end < 0) end = head.length;
    const colon = head.indexOf(':', start);
    if (colon < 0 || colon > end) return undefined;
    const name = head.slice(start, colon);
    if (!HEADER_NAME.test(name)) return undefined;
    let from = colon + 1;
    let to = end;
    while (from < to && isBlank(head.charCodeAt(from))) from++;
    while (to > from && isBlank(head.charCodeAt(to - 1))) to--;
    const value = head.slice(from, to);
    start = end + 2;
    const lower = name.toLowerCase();
    const field = fields.get(lower);
    if (field) {
      if (request.fields[field] !== undefined) return undefined;
      request.fields[field] = value;
    } else if (lower === 'connection' ? value.toLowerCase() !== 'keep-alive' : NOT_RAW.has(lower)) {
      return undefined;
    }
  }
  return request;
}

const HTTP_1 = /^[^\r\n]* HTTP\/1\.[01](?:\r\n|$)/;
const BODY_OR_PROTOCOL = /^CONNECT |\r\n(?:content-length|transfer-encoding|upgrade|expect)[ \t]*:/i;

/**
 * Whether node:http reads this head as one request and nothing after it: no body follows, and
 * the connection stays HTTP/1. Such a request can be counted while node:http answers it.
 */
export function isWholeRequest(head: string): boolean {
  return HTTP_1.test(head) && !ODD.test(head) && !BODY_OR_PROTOCOL.test(head);
}

/** Space or tab: the optional whitespace around a header value. */
const isBlank = (code: number) => code === 0x20 || code === 0x09;

let date = { second: -1, line: '' };

/** The `Date` header line of an answer written by hand, made once a second. */
export function dateLine(): string {
  const second = Math.floor(Date.now() / 1000);
  if (date.second !== second) date = { second, line: `Date: ${new Date(second * 1000).toUTCString()}\r\n` };
  return date.line;
}

/** An answer written by hand: its head and body in one write (no Nagle wait between them). */
export function writeAnswer(socket: Socket, head: string, body: Uint8Array): void {
  socket.cork();
  socket.write(head, 'latin1');
  socket.write(body);
  socket.uncork();
}
