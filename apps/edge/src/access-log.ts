import { randomBytes } from 'node:crypto';
import { symbols, type Logger } from 'pino';

export interface AccessLine {
  /** Epoch milliseconds. */
  time: number;
  reqId: string;
  method: string | undefined;
  host: string | undefined;
  url: string | undefined;
  status: number;
  bytes: number;
  ms: number;
  cache: string;
  client: string | undefined;
}

/** Characters a JSON string may hold as they are (printable ASCII but `"` and `\\`). */
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

const json = (value: string | undefined) =>
  value === undefined ? 'null' : PLAIN.test(value) ? `"${value}"` : JSON.stringify(value);

/** pino's number for `info`. */
const INFO = 30;

/** Lines gathered before they go to the stream, or this long after the first of them. */
const BATCH_CHARACTERS = 64 * 1024;
const BATCH_MS = 250;

/**
 * One JSON line per delivery request, in the process logger's format and on its stream, built
 * by hand: the fields are known and hold no secrets, so pino's generic serialisation and
 * redaction, which cost a hit more than its answer, are skipped. Lines go to the stream in
 * batches (64 KiB, or a quarter second after the first): the stream's cost per write grows
 * with what it already holds, and each of its writes is a round trip to a libuv thread.
 * `sample` (0 to 1) keeps that share of the lines of successful requests; every failure is
 * logged.
 */
export class AccessLog {
  private readonly stream: { write(line: string): unknown };
  private readonly prefix: string;
  private readonly enabled: boolean;
  private pending = '';
  private timer: NodeJS.Timeout | undefined;

  constructor(
    log: Logger,
    private readonly sample: number,
  ) {
    this.stream = (log as unknown as Record<symbol, { write(line: string): unknown }>)[symbols.streamSym]!;
    this.enabled = log.isLevelEnabled('info') && sample > 0;
    this.prefix = JSON.stringify(log.bindings()).slice(1, -1);
  }

  write(line: AccessLine): void {
    if (!this.enabled || (line.status < 400 && this.sample < 1 && Math.random() >= this.sample)) return;
    this.pending +=
      `{"level":${INFO},"time":${line.time},${this.prefix},"reqId":${json(line.reqId)},` +
      `"method":${json(line.method)},"host":${json(line.host)},"url":${json(line.url)},` +
      `"status":${line.status},"bytes":${line.bytes},"ms":${line.ms},"cache":"${line.cache}",` +
      `"client":${json(line.client)},"msg":"edge request"}\n`;
    if (this.pending.length >= BATCH_CHARACTERS) this.flush();
    else this.timer ??= setTimeout(this.flush, BATCH_MS).unref();
  }

  /** Hands what is gathered to the stream (at once on shutdown). */
  readonly flush = (): void => {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending === '') return;
    this.stream.write(this.pending);
    this.pending = '';
  };
}

/**
 * Request ids unique across processes without a random draw per request: a random prefix per
 * process and a counter.
 */
export class RequestIds {
  private readonly prefix = `${randomBytes(6).toString('hex')}-`;
  private counter = 0;

  next(): string {
    return this.prefix + (this.counter++).toString(36);
  }
}
