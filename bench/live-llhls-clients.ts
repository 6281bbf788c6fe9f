// The LL-HLS clients of live-llhls.ts, run in child processes of it (childMode): this file
// loads only what a client needs, so a child starts in a fraction of a second rather than
// compiling the server's stack beside the server it measures.
import { createConnection, type Socket } from 'node:net';
import { createInterface } from 'node:readline';
import * as HLS from 'hls-parser';

/** A child's clients: `count` of them from the `first`, for `windowMs` once the window opens. */
export interface ClientsTask {
  media: string;
  first: number;
  count: number;
  windowMs: number;
}

/**
 * What a child's clients received over the window: the parts of each, the 200 answers
 * (playlists and parts), the failed answers by status, the child's CPU.
 */
export interface ClientsReport {
  /** Per client, the numbers of the parts it received in the window. */
  received: number[][];
  /** Per client, ms from its first request to its first playlist (null: none came). */
  firstPlaylistMs: (number | null)[];
  answers: number;
  failures: Record<string, number>;
  /** The child's CPU over the window (ms). */
  cpuMs: number;
}

/** Where every connection of the child reads (their reads never overlap: each is handled at once). */
const READS = Buffer.alloc(1024 * 1024);

/** An answer as a client reads it. */
interface Answer {
  status: number;
  body: Buffer;
  retryAfterSeconds: number | undefined;
}

/**
 * One client's keep-alive HTTP/1.1 connection on a raw socket: a request at a time, as a
 * player's reload and part follow each other. It reads the status line, Content-Length and
 * Retry-After only, keeping the body when asked (playlists) and counting it otherwise (parts):
 * Node's HTTP client costs several times what the server spends on an answer, and would be what
 * the bench measured.
 */
class Connection {
  private socket: Socket | undefined;
  /** Answers the current socket gave: a reused connection the server closed is retried. */
  private answered = 0;
  private head: Buffer = Buffer.alloc(0);
  private body: Buffer[] = [];
  private remaining = -1;
  private status = 0;
  private retryAfterSeconds: number | undefined;
  private pending: { request: string; keep: boolean; resolve: (answer: Answer) => void } | undefined;

  constructor(
    private readonly port: number,
    private readonly userAgent: string,
  ) {}

  get(path: string, keep: boolean) {
    return new Promise<Answer>((resolve) => {
      const request = `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: ${this.userAgent}\r\n\r\n`;
      this.pending = { request, keep, resolve };
      this.send(request);
    });
  }

  close() {
    this.socket?.destroy();
  }

  private send(request: string) {
    this.socket ??= this.connect();
    this.socket.write(request);
  }

  private connect() {
    const socket = createConnection({
      port: this.port,
      host: '127.0.0.1',
      noDelay: true,
      // Read into one buffer, not a new one per read: a part comes in a few reads, not one per 64 KiB.
      onread: {
        buffer: READS,
        callback: (bytes: number) => {
          this.read(READS.subarray(0, bytes));
          return true;
        },
      },
    });
    this.answered = 0;
    // A connection gone without its answer is a failure (status 0); the next request reconnects.
    socket.on('error', () => undefined);
    socket.on('close', () => {
      if (this.socket !== socket) return;
      this.socket = undefined;
      const untouched = this.remaining < 0 && this.head.length === 0;
      this.head = Buffer.alloc(0);
      this.remaining = -1;
      // As browsers do: a request on a kept-alive connection closed before any of its answer
      // came (the server's idle timeout racing it) is sent again on a new one.
      if (this.pending && untouched && this.answered > 0) this.send(this.pending.request);
      else this.finish(0);
    });
    return socket;
  }

  /** `chunk` is READS's, overwritten by the next read: what is kept is copied. */
  private read(chunk: Buffer) {
    if (this.remaining < 0) {
      const head = this.head.length ? Buffer.concat([this.head, chunk]) : chunk;
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) {
        this.head = Buffer.from(head);
        return;
      }
      this.head = Buffer.alloc(0);
      const text = head.toString('latin1', 0, end);
      this.status = Number(text.slice(9, 12));
      const retryAfter = /\r\nretry-after: *(\d+)/i.exec(text)?.[1];
      this.retryAfterSeconds = retryAfter === undefined ? undefined : Number(retryAfter);
      // The live server gives every answer a Content-Length (no chunked encoding).
      this.remaining = Number(/\r\ncontent-length: *(\d+)/i.exec(text)?.[1] ?? 0);
      chunk = head.subarray(end + 4);
    }
    this.remaining -= chunk.length;
    if (this.pending?.keep && chunk.length) this.body.push(Buffer.from(chunk));
    if (this.remaining <= 0) {
      this.remaining = -1;
      this.answered++;
      this.finish(this.status);
    }
  }

  private finish(status: number) {
    const pending = this.pending;
    this.pending = undefined;
    const body = this.body.length === 1 ? this.body[0]! : Buffer.concat(this.body);
    this.body = [];
    // A connection gone without an answer says nothing of when to come back.
    pending?.resolve({ status, body, retryAfterSeconds: status ? this.retryAfterSeconds : undefined });
  }
}

/**
 * Prints `ready`, reads when the window opens (ms since the epoch) from stdin, then clients
 * `first` to `first + count - 1` reload with `_HLS_msn` / `_HLS_part` and fetch each new part
 * until `windowMs` after it; prints a ClientsReport.
 */
async function runClients({ media, first, count, windowMs }: ClientsTask) {
  process.stdout.write('ready\n');
  const opening = await createInterface({ input: process.stdin })[Symbol.asyncIterator]().next();
  const windowOpens = Number(opening.value);
  const url = new URL(media);
  const directory = url.pathname.replace(/[^/]*$/, '');
  const partNumber = (uri: string) => Number(/part(\d+)\.m4s/.exec(uri)?.[1]);
  // A channel needing playback tokens: the media playlist's URL has one, and its reloads carry it
  // (its parts' URIs, as the server lists them, do already).
  const token = url.searchParams.get('token');
  const tokenQuery = token ? `&token=${token}` : '';
  const windowCloses = windowOpens + windowMs;
  let cpuAtOpen: NodeJS.CpuUsage | undefined;
  setTimeout(() => (cpuAtOpen = process.cpuUsage()), windowOpens - Date.now());
  /** Failed answers by status (0: no answer). */
  const failures: Record<number, number> = {};
  // As a polite player: again after Retry-After when the server says when, else soon.
  const failed = ({ status, retryAfterSeconds }: Answer) => {
    failures[status] = (failures[status] ?? 0) + 1;
    return new Promise((resolve) => setTimeout(resolve, retryAfterSeconds ? retryAfterSeconds * 1000 : 100));
  };
  // Every client gets the same few playlist versions: each is parsed once, into what a client
  // asks next (the parts listed, oldest first, and the blocking reload for the one after them).
  const parsed = new Map<string, { parts: { path: string; number: number }[]; reload: string }>();
  const next = (text: string) => {
    let step = parsed.get(text);
    if (!step) {
      if (parsed.size > 16) parsed.clear();
      const playlist = HLS.parse(text) as HLS.types.MediaPlaylist;
      const open = playlist.segments.at(-1)!;
      step = {
        parts: playlist.segments
          .flatMap((segment) => segment.parts.filter((part) => !part.hint))
          .map((part) => ({ path: `${directory}${part.uri}`, number: partNumber(part.uri) })),
        reload: `${url.pathname}?_HLS_msn=${open.mediaSequenceNumber}&_HLS_part=${
          open.parts.filter((part) => !part.hint).length
        }${tokenQuery}`,
      };
      parsed.set(text, step);
    }
    return step;
  };
  /** Answers (200) in the window: playlists and parts. */
  let answers = 0;
  const received = Array.from({ length: count }, (): number[] => []);
  const firstPlaylistMs = Array.from({ length: count }, (): number | null => null);
  const client = async (index: number) => {
    const connection = new Connection(Number(url.port), `llhls-bench/${first + index}`);
    const startedAt = Date.now();
    let reload = url.pathname + url.search;
    /** The newest part fetched: a playlist answered unchanged lists it again, which is no new part. */
    let newest = -1;
    while (Date.now() < windowCloses) {
      const answer = await connection.get(reload, true);
      if (answer.status !== 200) {
        await failed(answer);
        reload = url.pathname + url.search;
        continue;
      }
      firstPlaylistMs[index] ??= Date.now() - startedAt;
      if (Date.now() >= windowOpens) answers++;
      const step = next(answer.body.toString('utf8'));
      // As a player does: it starts at the newest part, then fetches every part after the last
      // it has, several when they came out together.
      const wanted = newest < 0 ? step.parts.slice(-1) : step.parts.filter((part) => part.number > newest);
      for (const { path, number } of wanted) {
        const part = await connection.get(path, false);
        if (part.status !== 200) {
          await failed(part);
          // Fallen so far behind that the part is gone: on from the newest part, as a player would.
          newest = -1;
          break;
        }
        newest = number;
        if (Date.now() < windowOpens) continue;
        answers++;
        received[index]!.push(number);
      }
      reload = step.reload;
    }
    connection.close();
  };
  await Promise.all(received.map((_, index) => client(index)));
  const cpu = process.cpuUsage(cpuAtOpen);
  const report: ClientsReport = {
    received,
    firstPlaylistMs,
    answers,
    failures,
    cpuMs: (cpu.user + cpu.system) / 1e3,
  };
  process.stdout.write(`${JSON.stringify(report)}\n`);
  // stdin, still open, would keep the child running.
  process.exit(0);
}

await runClients(JSON.parse(process.argv[2]!) as ClientsTask);
