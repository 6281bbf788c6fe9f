import { randomBytes } from 'node:crypto';
import { symbols, type Logger } from 'pino';

export interface AccessLine {
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

const json = (value: string | undefined) => (value === undefined ? 'null' : JSON.stringify(value));

/** pino's number for `info`. */
const INFO = 30;

/**
 * One JSON line per delivery request, in the process logger's format and on its stream (an
 * asynchronous one: lines written while a write is in flight go out together), built by hand:
 * the fields are known and hold no secrets, so pino's generic serialisation and redaction,
 * which cost a hit more than its answer, are skipped. `sample` (0 to 1) keeps that share of
 * the lines of successful requests; every failure is logged.
 */
export class AccessLog {
  private readonly stream: { write(line: string): unknown };
  private readonly prefix: string;
  private readonly enabled: boolean;

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
    this.stream.write(
      `{"level":${INFO},"time":${Date.now()},${this.prefix},"reqId":${json(line.reqId)},` +
        `"method":${json(line.method)},"host":${json(line.host)},"url":${json(line.url)},` +
        `"status":${line.status},"bytes":${line.bytes},"ms":${line.ms},"cache":"${line.cache}",` +
        `"client":${json(line.client)},"msg":"edge request"}\n`,
    );
  }
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
