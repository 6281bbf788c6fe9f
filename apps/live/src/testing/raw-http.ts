// A test's HTTP/1.1 client on a raw socket: where the live process answers a connection depends
// on its first request (viewers/hls-handoff.ts), which fetch's pooled connections hide.
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';

export class RawConnection {
  private buffered = Buffer.alloc(0);
  private wake: () => void = () => {};
  /** Resolves when the server ends the connection. */
  readonly ended: Promise<void>;

  private constructor(
    private readonly socket: Socket,
    private readonly userAgent: string,
    /** Header lines (each ending in CRLF) every request carries. */
    private readonly extraHeaders: string,
  ) {
    socket.on('data', (chunk: Buffer) => {
      this.buffered = Buffer.concat([this.buffered, chunk]);
      this.wake();
    });
    this.ended = new Promise((resolve) => socket.once('end', () => resolve()));
  }

  static async open(
    baseUrl: string,
    userAgent = 'raw-connection',
    extraHeaders = '',
  ): Promise<RawConnection> {
    const { hostname, port } = new URL(baseUrl);
    const socket = connect(Number(port), hostname);
    await once(socket, 'connect');
    return new RawConnection(socket, userAgent, extraHeaders);
  }

  /** Bytes as they are, a request in part or several. */
  send(raw: string) {
    this.socket.write(raw);
  }

  get(path: string) {
    return this.request(`GET ${path} HTTP/1.1`);
  }

  async request(line: string, body = '') {
    this.socket.write(this.head(line, body) + body);
    return this.answer();
  }

  /** Requests written at once, their answers in order. */
  async pipeline(paths: string[]) {
    this.socket.write(paths.map((path) => this.head(`GET ${path} HTTP/1.1`, '')).join(''));
    const answers = [];
    for (let i = 0; i < paths.length; i++) answers.push(await this.answer());
    return answers;
  }

  close() {
    this.socket.destroy();
  }

  private head(line: string, body: string) {
    const length = body ? `Content-Length: ${Buffer.byteLength(body)}\r\n` : '';
    return `${line}\r\nHost: 127.0.0.1\r\nUser-Agent: ${this.userAgent}\r\n${this.extraHeaders}${length}\r\n`;
  }

  private async answer(): Promise<{ status: number; headers: Record<string, string>; body: Buffer }> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const end = this.buffered.indexOf('\r\n\r\n');
      if (end >= 0) {
        const [statusLine, ...lines] = this.buffered.toString('latin1', 0, end).split('\r\n');
        const headers = Object.fromEntries(
          lines.map((line) => [
            line.slice(0, line.indexOf(':')).toLowerCase(),
            line.slice(line.indexOf(':') + 1).trim(),
          ]),
        );
        const length = Number(headers['content-length'] ?? 0);
        if (this.buffered.length >= end + 4 + length) {
          const body = this.buffered.subarray(end + 4, end + 4 + length);
          this.buffered = this.buffered.subarray(end + 4 + length);
          return { status: Number(statusLine!.split(' ')[1]), headers, body };
        }
      }
      if (Date.now() > deadline) throw new Error('no whole answer in 10 s');
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        setTimeout(resolve, 100);
      });
    }
  }
}
