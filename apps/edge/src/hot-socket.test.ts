import { once } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { isWholeRequest } from '@ukiyo/server/request-head';
import { HotPathServer, parseHead, type HitRequest } from './hot-socket.ts';

const head = (...lines: string[]) => lines.join('\r\n');

describe('parseHead', () => {
  it('reads what a hit needs, trimmed as node:http trims', () => {
    expect(
      parseHead(
        head(
          'GET /w=100/a.jpg?x=1 HTTP/1.1',
          'HOST: img.example',
          'Accept:\t image/webp,*/* ',
          'If-None-Match: "abc"',
          'X-ImageFlux-Signature: 1.sig',
          'X-Forwarded-For: 10.0.0.1',
          'X-Request-Id: proxy-1',
          'Connection: Keep-Alive',
          'User-Agent: curl/8',
          'Cookie: a=b',
        ),
        '127.0.0.1',
      ),
    ).toEqual<HitRequest>({
      method: 'GET',
      url: '/w=100/a.jpg?x=1',
      host: 'img.example',
      accept: 'image/webp,*/*',
      ifNoneMatch: '"abc"',
      signature: '1.sig',
      forwardedFor: '10.0.0.1',
      requestId: 'proxy-1',
      remoteAddress: '127.0.0.1',
      servername: undefined,
    });
    expect(parseHead(head('HEAD / HTTP/1.1', 'Host: a'), undefined)).toMatchObject({
      method: 'HEAD',
      url: '/',
      host: 'a',
      accept: undefined,
    });
    expect(parseHead(head('GET / HTTP/1.1', 'Host:', 'Accept:'), undefined)).toMatchObject({
      host: '',
      accept: '',
    });
  });

  it.each([
    ['no Host', head('GET / HTTP/1.1', 'Accept: */*')],
    ['a request line only', 'GET / HTTP/1.1'],
    ['HTTP/1.0', head('GET / HTTP/1.0', 'Host: a')],
    ['HTTP/2 preface', head('PRI * HTTP/2.0', '', 'SM')],
    ['POST', head('POST / HTTP/1.1', 'Host: a')],
    ['lower-case method', head('get / HTTP/1.1', 'Host: a')],
    ['absolute form', head('GET http://a/ HTTP/1.1', 'Host: a')],
    ['a space in the target', head('GET /a b HTTP/1.1', 'Host: a')],
    ['two spaces', head('GET  / HTTP/1.1', 'Host: a')],
    ['two Hosts', head('GET / HTTP/1.1', 'Host: a', 'host: b')],
    ['two Accepts', head('GET / HTTP/1.1', 'Host: a', 'Accept: a', 'Accept: b')],
    [
      'two signatures',
      head('GET / HTTP/1.1', 'Host: a', 'X-Imageflux-Signature: a', 'x-imageflux-signature: b'),
    ],
    ['two If-None-Match', head('GET / HTTP/1.1', 'Host: a', 'If-None-Match: a', 'If-None-Match: b')],
    ['two X-Forwarded-For', head('GET / HTTP/1.1', 'Host: a', 'X-Forwarded-For: a', 'X-Forwarded-For: b')],
    ['two request ids', head('GET / HTTP/1.1', 'Host: a', 'X-Request-Id: a', 'X-Request-Id: b')],
    ['a body length', head('GET / HTTP/1.1', 'Host: a', 'Content-Length: 0')],
    ['a chunked body', head('GET / HTTP/1.1', 'Host: a', 'Transfer-Encoding: chunked')],
    ['an upgrade', head('GET / HTTP/1.1', 'Host: a', 'Upgrade: websocket')],
    ['Expect', head('GET / HTTP/1.1', 'Host: a', 'Expect: 100-continue')],
    ['Connection: close', head('GET / HTTP/1.1', 'Host: a', 'Connection: close')],
    ['Connection: upgrade', head('GET / HTTP/1.1', 'Host: a', 'Connection: keep-alive, Upgrade')],
    ['a folded line', head('GET / HTTP/1.1', 'Host: a', 'Accept: a', ' b')],
    ['a space before the colon', head('GET / HTTP/1.1', 'Host : a')],
    ['no colon', head('GET / HTTP/1.1', 'Host: a', 'Accept')],
    ['an empty name', head('GET / HTTP/1.1', 'Host: a', ': b')],
    ['a bare LF', 'GET / HTTP/1.1\nHost: a'],
    ['a bare CR', head('GET / HTTP/1.1', 'Host: a\rb')],
    ['a NUL', head('GET / HTTP/1.1', 'Host: a\0')],
    ['a byte past ASCII', head('GET /\u00e9 HTTP/1.1', 'Host: a')],
    ['a control character', head('GET / HTTP/1.1', 'Host: a\u0001')],
  ])('leaves %s to node:http', (_, text) => {
    expect(parseHead(text, undefined)).toBeUndefined();
  });
});

describe('isWholeRequest', () => {
  it('counts a head without a body as one request, whatever else node:http makes of it', () => {
    for (const text of [
      head('GET / HTTP/1.1', 'Host: a', 'Accept: a', 'Accept: b'),
      head('HEAD / HTTP/1.1', 'Host: a', 'Connection: close'),
      head('GET / HTTP/1.0'),
      head('POST /x HTTP/1.1', 'Host: a'),
      head('get http://a/ HTTP/1.1', 'x-content-length-note: 1'),
    ])
      expect(isWholeRequest(text), text).toBe(true);
  });

  it.each([
    ['a body length', head('POST / HTTP/1.1', 'Host: a', 'content-LENGTH: 2')],
    ['a padded body length', head('GET / HTTP/1.1', 'Host: a', 'Content-Length : 0')],
    ['a chunked body', head('POST / HTTP/1.1', 'Transfer-Encoding: chunked')],
    ['an upgrade', head('GET / HTTP/1.1', 'Upgrade: websocket', 'Connection: Upgrade')],
    ['Expect', head('PUT / HTTP/1.1', 'Expect: 100-continue')],
    ['CONNECT', head('CONNECT a:443 HTTP/1.1', 'Host: a:443')],
    ['HTTP/2 preface', 'PRI * HTTP/2.0'],
    ['HTTP/0.9', 'GET /'],
    ['a bare LF', 'GET / HTTP/1.1\nContent-Length: 5'],
    ['a byte past ASCII', head('GET / HTTP/1.1', 'Host: \u00e9')],
  ])('does not count %s', (_, text) => {
    expect(isWholeRequest(text)).toBe(false);
  });
});

/** An answer for `/hot*` URLs only; the rest goes to node:http, which says `http` in a header. */
function testServer() {
  const seen: string[] = [];
  const server = new HotPathServer(
    { keepAliveTimeout: 5_000 },
    (req: IncomingMessage, res: ServerResponse) => {
      seen.push(`http ${req.method} ${req.url}`);
      res.writeHead(200, { 'X-Via': 'http', 'Content-Length': 4 }).end('full');
    },
    (request) => {
      if (!request.url!.startsWith('/hot')) return undefined;
      seen.push(`hot ${request.method} ${request.url}`);
      const body = request.url!.startsWith('/hot-big')
        ? Buffer.alloc(64 * 1024)
        : Buffer.from(`hot:${request.url}`);
      const notModified = request.ifNoneMatch === '"e"';
      return {
        status: notModified ? 304 : 200,
        headers: 'X-Via: hot\r\nETag: "e"\r\n',
        body,
        bodyless: notModified || request.method === 'HEAD',
      };
    },
  );
  return { server, seen };
}

let open: HotPathServer | undefined;
afterEach(async () => {
  open?.closeAllConnections();
  if (open?.listening) await new Promise((resolve) => open!.close(resolve));
  open = undefined;
});

async function listening(server: HotPathServer): Promise<number> {
  open = server;
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

/** Writes `chunks` one by one (each its own TCP write) and reads until `answers` are in. */
async function exchange(port: number, chunks: string[], answers: number): Promise<string> {
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  let received = '';
  socket.setEncoding('latin1');
  socket.on('data', (data: string) => (received += data));
  for (const chunk of chunks) {
    socket.write(chunk);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await until(() => countAnswers(received) >= answers);
  socket.destroy();
  return received;
}

const countAnswers = (text: string) => text.split('HTTP/1.1 ').length - 1;

async function until(done: () => boolean): Promise<void> {
  for (let waited = 0; !done(); waited += 10) {
    if (waited > 5_000) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const get = (url: string, ...extra: string[]) =>
  `${head(`GET ${url} HTTP/1.1`, 'Host: a', ...extra)}\r\n\r\n`;

describe('HotPathServer', () => {
  it('answers hits on the socket, framed as node:http frames them', async () => {
    const { server, seen } = testServer();
    const port = await listening(server);
    const text = await exchange(port, [get('/hot1') + get('/hot2', 'If-None-Match: "e"')], 2);
    const [first, second] = text.split(/(?=HTTP\/1\.1 )/);
    expect(first).toMatch(/^HTTP\/1\.1 200 OK\r\nX-Via: hot\r\nETag: "e"\r\nDate: .+ GMT\r\n/);
    expect(first).toContain(
      'Connection: keep-alive\r\nKeep-Alive: timeout=5\r\nContent-Length: 9\r\n\r\nhot:/hot1',
    );
    expect(second).toMatch(/^HTTP\/1\.1 304 Not Modified\r\n/);
    expect(second).not.toContain('Content-Length');
    expect(second!.endsWith('\r\n\r\n')).toBe(true);
    expect(seen).toEqual(['hot GET /hot1', 'hot GET /hot2']);
  });

  it('says the length of a HEAD answer and sends no body', async () => {
    const { server } = testServer();
    const port = await listening(server);
    const text = await exchange(port, [`${head('HEAD /hot HTTP/1.1', 'Host: a')}\r\n\r\n${get('/hot')}`], 2);
    expect(text).toMatch(/Content-Length: 8\r\n\r\nHTTP\/1\.1 200 OK/);
    expect(text.endsWith('hot:/hot')).toBe(true);
  });

  it('passes what it does not answer to node:http, in order, and reads hits again after', async () => {
    const { server, seen } = testServer();
    const port = await listening(server);
    // Pipelined in one write: a hit, a miss, and a hit node:http answers since it holds the
    // miss; then, once node:http is done, a hit the hot path answers again.
    const text = await exchange(port, [get('/hot1') + get('/miss') + get('/hot2'), get('/hot3')], 4);
    expect(seen).toEqual(['hot GET /hot1', 'http GET /miss', 'http GET /hot2', 'hot GET /hot3']);
    expect(text.match(/X-Via: \w+/g)).toEqual(['X-Via: hot', 'X-Via: http', 'X-Via: http', 'X-Via: hot']);
  });

  it('passes an unusual request without a body on and reads hits after it', async () => {
    const { server, seen } = testServer();
    const port = await listening(server);
    const twice = get('/hot-twice', 'Accept: a', 'Accept: b');
    await exchange(port, [twice, get('/hot-next'), get('/hot')], 3);
    expect(seen).toEqual(['http GET /hot-twice', 'hot GET /hot-next', 'hot GET /hot']);
  });

  it('keeps answers in order behind a slow one of node:http', async () => {
    const seen: string[] = [];
    const server = new HotPathServer(
      { keepAliveTimeout: 5_000 },
      (req, res) => {
        seen.push(`http ${req.url}`);
        setTimeout(() => res.writeHead(200, { 'X-Via': 'http', 'Content-Length': 0 }).end(), 300);
      },
      (request) =>
        request.url === '/hot'
          ? { status: 200, headers: 'X-Via: hot\r\n', body: Buffer.from('x'), bodyless: false }
          : undefined,
    );
    const port = await listening(server);
    const text = await exchange(port, [get('/slow'), get('/hot'), get('/hot')], 3);
    expect(text.match(/X-Via: \w+/g)).toEqual(['X-Via: http', 'X-Via: http', 'X-Via: http']);
    expect(seen).toEqual(['http /slow', 'http /hot', 'http /hot']);
  });

  it('answers a head split across writes once its end comes, and reads hits after it', async () => {
    const { server, seen } = testServer();
    const port = await listening(server);
    const request = get('/hot-split');
    const next = get('/hot-next');
    await exchange(
      port,
      [request.slice(0, 10), request.slice(10, 30), request.slice(30) + next.slice(0, 5), next.slice(5)],
      2,
    );
    expect(seen).toEqual(['hot GET /hot-split', 'hot GET /hot-next']);
  });

  it('gives node:http the rest of a connection with a body, or a split head past 8 KiB', async () => {
    const { server, seen } = testServer();
    const port = await listening(server);
    await exchange(
      port,
      [`${head('GET /hot-body HTTP/1.1', 'Host: a', 'Content-Length: 2')}\r\n\r\nab`, get('/hot-after')],
      2,
    );
    const large = get('/hot-large', `Cookie: ${'c'.repeat(9_000)}`);
    await exchange(port, [large.slice(0, 5_000), large.slice(5_000), get('/hot-after')], 2);
    expect(seen).toEqual([
      'http GET /hot-body',
      'http GET /hot-after',
      'http GET /hot-large',
      'http GET /hot-after',
    ]);
  });

  it('answers 408 and closes when a split head takes longer than headersTimeout', async () => {
    const { server, seen } = testServer();
    server.headersTimeout = 300;
    const port = await listening(server);
    const socket = connect(port, '127.0.0.1');
    let received = '';
    socket.on('data', (data: Buffer) => (received += data.toString('latin1')));
    socket.write(get('/hot'));
    await until(() => countAnswers(received) === 1);
    const closed = once(socket, 'close');
    // One byte every 100 ms: never idle, never done.
    for (const byte of get('/hot-slow').slice(0, 8)) {
      if (socket.destroyed) break;
      socket.write(byte);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await closed;
    expect(received).toMatch(/hot:\/hotHTTP\/1\.1 408 Request Timeout\r\nConnection: close\r\n\r\n$/);
    expect(seen).toEqual(['hot GET /hot']);
  });

  it('answers 408 and closes when a split head stalls past the idle timeout', async () => {
    const server = new HotPathServer(
      { keepAliveTimeout: 200 },
      (_req, res) => res.end(),
      () => undefined,
    );
    const port = await listening(server);
    const text = await exchange(port, [get('/hot').slice(0, 8)], 1);
    expect(text).toBe('HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n');
  });

  it('stops answering a client that does not read and lets node:http hold it back', async () => {
    const { server, seen } = testServer();
    const port = await listening(server);
    const socket = connect(port, '127.0.0.1');
    await once(socket, 'connect');
    socket.pause();
    // 1,000 pipelined requests in one write, each answered with 64 KiB: past what the kernel's
    // buffers take, 1 MiB more may wait unread.
    socket.write(get('/hot-big').repeat(1_000));
    await until(() => seen.some((entry) => entry.startsWith('http')));
    const hot = seen.filter((entry) => entry.startsWith('hot')).length;
    expect(hot).toBeGreaterThan(0);
    expect(hot).toBeLessThan(400);
    socket.destroy();
  });

  it('ends idle hot connections when draining, and every connection when told to', async () => {
    const { server } = testServer();
    const port = await listening(server);
    const idle = connect(port, '127.0.0.1');
    idle.write(get('/hot'));
    await once(idle, 'data');
    const ended = once(idle, 'end');
    const closed = new Promise((resolve) => server.close(resolve));
    server.closeIdleConnections();
    await ended;
    idle.end();
    await closed;
    expect(server.listening).toBe(false);

    const { server: again } = testServer();
    const port2 = await listening(again);
    const sockets: Socket[] = [connect(port2, '127.0.0.1'), connect(port2, '127.0.0.1')];
    sockets[0]!.write(get('/hot'));
    sockets[1]!.write(get('/miss'));
    await Promise.all(sockets.map((socket) => once(socket, 'data')));
    const gone = sockets.map((socket) => once(socket, 'close'));
    again.closeAllConnections();
    await Promise.all(gone);
  });

  it('lets a request node:http holds finish when draining', async () => {
    const server = new HotPathServer(
      { keepAliveTimeout: 5_000 },
      (_req, res) => setTimeout(() => res.writeHead(200, { 'Content-Length': 4 }).end('done'), 300),
      () => undefined,
    );
    const port = await listening(server);
    const answer = exchange(port, [get('/slow')], 1);
    await new Promise((resolve) => setTimeout(resolve, 100));
    server.close();
    server.closeIdleConnections();
    expect(await answer).toMatch(/^HTTP\/1\.1 200 OK\r\n[^]*\r\n\r\ndone$/);
  });

  it('closes a hot connection idle past the keep-alive timeout', async () => {
    const server = new HotPathServer(
      { keepAliveTimeout: 200 },
      (_req, res) => res.end(),
      () => ({ status: 200, headers: '', body: Buffer.from('x'), bodyless: false }),
    );
    const port = await listening(server);
    const socket = connect(port, '127.0.0.1');
    socket.write(get('/hot'));
    await once(socket, 'data');
    const started = Date.now();
    await once(socket, 'close');
    expect(Date.now() - started).toBeGreaterThanOrEqual(150);
  });
});
