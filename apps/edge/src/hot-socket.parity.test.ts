// The hot path reads request heads itself (hot-socket.ts). Whatever it accepts, node:http must
// read the same way: one request with no body (the next request starts right after it), with
// the same method, target and header values. A head they read differently would let a crafted
// request be answered for another URL, or smuggle a request past one of them. Random heads,
// many of them malformed, go to a plain node:http server, each followed by two more requests;
// where parseHead or isWholeRequest accepts a head, node:http must agree.
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isWholeRequest } from '@ukiyo/server/request-head';
import { parseHead } from './hot-socket.ts';

interface Parsed {
  method: string | undefined;
  url: string | undefined;
  httpVersion: string;
  headers: IncomingHttpHeaders;
}

let server: Server;
let port: number;
let parsed: Parsed[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    parsed.push({ method: req.method, url: req.url, httpVersion: req.httpVersion, headers: req.headers });
    res.writeHead(200, { 'Content-Length': 0 }).end();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  port = (server.address() as AddressInfo).port;
});

afterAll(() => new Promise((resolve) => server.close(resolve)));

const FOLLOWING = new Set(['/second', '/third']);
const NEXT =
  'GET /second HTTP/1.1\r\nHost: a\r\n\r\nGET /third HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n';

/**
 * What node:http made of one head sent on a connection, followed by two requests (the last
 * closes it): nothing (it refused the head and closed), the head's request alone (it closed
 * after it), the two that follow (it refused the head and went on), or all three.
 */
async function nodeReads(head: string): Promise<Parsed[]> {
  parsed = [];
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => {});
  socket.write(Buffer.from(`${head}\r\n\r\n${NEXT}`, 'latin1'));
  socket.resume();
  await once(socket, 'close');
  return parsed;
}

const pick = <T>(...values: T[]) => fc.constantFrom(...values);
/** Mostly `usual`, sometimes one of `odd`: heads near the ones the hot path accepts. */
const mostly = <T>(usual: fc.Arbitrary<T>, odd: fc.Arbitrary<T>) =>
  fc.oneof({ weight: 6, arbitrary: usual }, { weight: 1, arbitrary: odd });

const headerName = pick(
  'Host',
  'host',
  'HOST',
  'Accept',
  'If-None-Match',
  'X-ImageFlux-Signature',
  'X-Forwarded-For',
  'X-Request-Id',
  'Connection',
  'Content-Length',
  'Transfer-Encoding',
  'Upgrade',
  'Expect',
  'User-Agent',
  'Bad Name',
  'Host\t',
  '',
);
const separator = mostly(pick(':', ': ', ':\t', ':  '), pick(' :', '\t:'));
const value = mostly(
  pick('img.example', 'image/webp,*/*', '"abc"', 'keep-alive', 'close', '0', '34', 'chunked', '10.0.0.1', ''),
  fc.string({ unit: pick('a', ' ', '\t', ',', '"', '\\', '\u00e9', '\r', '\n', '\0', '\u0001', '/') }),
);
const lineEnd = mostly(pick('\r\n'), pick('\n', '\r'));
const header = fc
  .tuple(headerName, separator, value, lineEnd)
  .map(([name, sep, text, end]) => `${end}${name}${sep}${text}`);
const requestLine = fc
  .tuple(
    mostly(pick('GET', 'HEAD'), pick('get', 'POST', 'CONNECT', 'PRI')),
    mostly(pick(' '), pick('  ', '\t')),
    fc.oneof(
      pick('/', '/w=100/a.jpg', '/a?b=c', '*', 'http://a/', '/a b'),
      fc
        .string({ unit: pick('a', '/', '%', '?', '#', '"', '{', '|', '\u00e9', '\u007f', ' ') })
        .map((s) => `/${s}`),
    ),
    mostly(pick(' HTTP/1.1'), pick(' HTTP/1.0', ' http/1.1', ' HTTP/2.0', '', ' HTTP/1.1 ')),
  )
  .map((parts) => parts.join(''));
const hostLine = mostly(pick('\r\nHost: img.example'), pick(''));
const head = fc
  .tuple(requestLine, hostLine, fc.array(header, { maxLength: 6 }))
  .map(([line, host, headers]) => line + host + headers.join(''));

describe('the hot path reads heads as node:http does', () => {
  it('parseHead and isWholeRequest agree with node:http', { timeout: 120_000 }, async () => {
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(head, async (text) => {
        const ours = parseHead(text, '127.0.0.1');
        const whole = isWholeRequest(text);
        if (!ours && !whole) return;
        const theirs = await nodeReads(text);
        const label = JSON.stringify(text);
        const next = theirs.filter((request) => FOLLOWING.has(request.url!)).map((request) => request.url);
        const own = theirs.filter((request) => !FOLLOWING.has(request.url!));
        expect(own.length, label).toBeLessThanOrEqual(1);
        // node:http read the two requests after the head as requests, or closed the connection
        // after the head (refused, or its request asked to close).
        if (next.length !== 2) {
          expect(next, label).toEqual([]);
          if (own[0])
            expect(
              own[0].httpVersion === '1.0' || /close/i.test(own[0].headers.connection ?? ''),
              label,
            ).toBe(true);
        }
        if (!ours) return;
        accepted++;
        expect(own, label).toHaveLength(1);
        const [{ method, url, headers }] = own as [Parsed];
        const { remoteAddress: _address, ...read } = ours;
        expect(read, label).toEqual({
          method,
          url,
          host: headers.host,
          accept: headers.accept,
          ifNoneMatch: headers['if-none-match'],
          signature: headers['x-imageflux-signature'],
          forwardedFor: headers['x-forwarded-for'],
          requestId: headers['x-request-id'],
        });
      }),
      { numRuns: 1_500, seed: 20261128 },
    );
    expect(accepted).toBeGreaterThan(20);
  });
});
