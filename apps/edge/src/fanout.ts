import { readFile, rename, writeFile } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';

/** Every edge subscribes here; console servers publish here and never subscribe. */
export const EDGE_CHANNEL = 'ukiyo:edge';
/**
 * Every purge fanned out is also appended here (a stream of about the last PURGE_LOG_LENGTH),
 * so an edge that was not subscribed when it went out applies it once it is back.
 */
export const PURGE_LOG = 'ukiyo:purges';
const PURGE_LOG_LENGTH = 10_000;
const REPLY_PREFIX = 'ukiyo:reply:';
/** Purge-log entries read per round trip while catching up. */
const CATCH_UP_BATCH = 200;

/** What one purge removes: every variant of one image, or of every image under a path prefix. */
type PurgeTarget = { imagePath: string } | { pathPrefix: string };
type PurgeMessage = { from: string; type: 'purge'; originId: number } & PurgeTarget;
/**
 * A console server's cache call: every edge answers on `replyTo` with its own URLs of one image
 * (looked up, or removed when `remove`), or removes every image under a path prefix and answers
 * how many it held.
 */
type CacheMessage = {
  from: string;
  type: 'cache';
  id: string;
  replyTo: string;
  originId: number;
} & ({ url: string; remove: boolean } | { pathPrefix: string });
/** `logId`: the purge's entry in PURGE_LOG, added by Redis when the message is published. */
type Message = ((PurgeMessage | CacheMessage) & { logId?: string }) | { from: string; type: 'origins' };

/** A PURGE_LOG entry: an edge's purge names the image path, a console's cache call the URL; either may name a path prefix. */
type LoggedPurge = { from: string; originId: string } & (
  { imagePath: string } | { url: string } | { pathPrefix: string }
);

/**
 * Appends the purge to PURGE_LOG and publishes the message with the entry's id, in one script:
 * both happen or neither, in log order, so an edge that hears a purge live has heard (or caught
 * up on) every earlier one and can record its id. Returns PUBLISH's receiver count.
 */
const LOG_AND_PUBLISH = `
local logId = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', unpack(ARGV, 4))
local message = cjson.decode(ARGV[3])
message.logId = logId
return redis.call('PUBLISH', ARGV[2], cjson.encode(message))`;

async function logAndPublish(publisher: Redis, message: PurgeMessage | CacheMessage): Promise<number> {
  const target =
    'pathPrefix' in message
      ? ['pathPrefix', message.pathPrefix]
      : 'imagePath' in message
        ? ['imagePath', message.imagePath]
        : ['url', message.url];
  const entry = ['from', message.from, 'originId', String(message.originId), ...target];
  const receivers = await publisher.eval(
    LOG_AND_PUBLISH,
    1,
    PURGE_LOG,
    PURGE_LOG_LENGTH,
    EDGE_CHANNEL,
    JSON.stringify(message),
    ...entry,
  );
  return receivers as number;
}

async function announceOriginsChanged(publisher: Redis, from: string): Promise<void> {
  const message: Message = { from, type: 'origins' };
  await publisher.publish(EDGE_CHANNEL, JSON.stringify(message));
}

interface Reply {
  id: string;
  from: string;
  urls: string[];
  /** Images removed by a purge by path prefix. */
  images?: number;
}

export interface FanOutHandlers {
  purge(originId: number, imagePath: string): Promise<unknown>;
  originsChanged(): Promise<unknown>;
  /** This edge's cached variants of one URL, removed first when `remove`. */
  cache(originId: number, url: string, remove: boolean): Promise<string[]>;
  /** Removes this edge's variants of every image under `pathPrefix`; answers how many images. */
  purgePrefix(originId: number, pathPrefix: string): Promise<number>;
}

/** ioredis retries forever, at most every 2 s: a Redis restart is picked up within that. */
const retryStrategy = (times: number) => Math.min(times * 100, 2_000);

/**
 * Cross-node messages over Redis pub/sub: a purge made on one edge empties every edge's
 * cache, an edge that sees an origin change makes the others reload at once instead of at
 * their next poll, and console servers' cache calls reach every edge (see CacheRequester).
 * Without REDIS_URL a single node needs none of it. When Redis is down the edge keeps serving;
 * ioredis reconnects, and on every connection the edge subscribes again and then applies the
 * purges it missed from PURGE_LOG.
 */
export class FanOut {
  private readonly id = randomUUID();
  private readonly publisher: Redis;
  private readonly subscriber: Redis;
  /** The newest PURGE_LOG entry this edge has applied; unset until its first subscription. */
  private appliedLogId: string | undefined;
  /** Set once the current connection has caught up: from then on live purges' ids are recorded. */
  private caughtUp = false;
  /** Counts the subscriber's connections, so a catch-up knows whether its own is still current. */
  private connections = 0;
  /** Catch-ups run one after another: one cut short by a lost connection finishes first. */
  private catchingUp: Promise<void> = Promise.resolve();

  /** Writes of appliedLogFile, one after another so the last id written is the newest. */
  private saving: Promise<void> = Promise.resolve();

  /**
   * `appliedLogFile` keeps the newest applied PURGE_LOG id beside the edge's cache, so an edge
   * restarted with that cache catches up on the purges made while it was down; without it a
   * new process starts at the log's end.
   */
  constructor(
    url: string,
    private readonly handlers: FanOutHandlers,
    private readonly log: Logger,
    private readonly appliedLogFile?: string,
  ) {
    // No offline queue: a publish while Redis is down fails at once instead of piling up.
    this.publisher = new Redis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: false, retryStrategy });
    // RESP3 lets the subscriber read PURGE_LOG while subscribed, in order with its messages.
    // It subscribes itself on every connection (not ioredis's resubscription, which runs
    // unseen) so the log is read only once the subscription holds; it connects in start().
    this.subscriber = new Redis(url, {
      retryStrategy,
      protocol: 3,
      autoResubscribe: false,
      lazyConnect: true,
    });
    for (const client of [this.publisher, this.subscriber])
      client.on('error', (error: unknown) => log.warn({ err: error }, 'redis error'));
    this.subscriber.on('message', (_channel: string, raw: string) => this.receive(raw));
    this.subscriber.on('ready', () => {
      const connection = ++this.connections;
      this.caughtUp = false;
      this.catchingUp = this.catchingUp
        .then(() => this.subscribeAndCatchUp(connection))
        .catch((error: unknown) => log.warn({ err: error }, 'purge catch-up failed'));
    });
  }

  /** Both connections ready: purges and config changes reach this edge. */
  get connected(): boolean {
    return this.subscriber.status === 'ready' && this.publisher.status === 'ready';
  }

  /** Resolves once subscribed; rejects if Redis cannot be reached now (retried in the background). */
  async start(): Promise<void> {
    await this.subscriber.connect();
    await this.catchingUp;
  }

  async publishPurge(originId: number, target: PurgeTarget): Promise<void> {
    await logAndPublish(this.publisher, { from: this.id, type: 'purge', originId, ...target });
  }

  async publishOriginsChanged(): Promise<void> {
    await announceOriginsChanged(this.publisher, this.id);
  }

  async ping(): Promise<void> {
    await this.publisher.ping();
  }

  async close(): Promise<void> {
    this.subscriber.disconnect();
    this.publisher.disconnect();
    // The position written last is on disk before the next process reads it: one still being
    // written made a restarted edge apply again a purge applied before (CI, once).
    await this.saving;
  }

  private receive(raw: string): void {
    let message: Message;
    try {
      message = JSON.parse(raw) as Message;
    } catch {
      return;
    }
    // Live messages arrive in log order, so every earlier purge has been applied too.
    if (this.caughtUp && message.type !== 'origins' && message.logId) this.recordApplied(message.logId);
    if (message.from === this.id) return;
    let done: Promise<unknown>;
    if (message.type === 'purge') done = this.apply(message.originId, message);
    else if (message.type === 'origins') done = this.handlers.originsChanged();
    else {
      const { id, replyTo } = message;
      if (!replyTo.startsWith(REPLY_PREFIX)) return;
      const reply = (answer: Omit<Reply, 'id' | 'from'>) =>
        this.publisher.publish(replyTo, JSON.stringify({ id, from: this.id, ...answer }));
      done =
        'pathPrefix' in message
          ? this.handlers
              .purgePrefix(message.originId, message.pathPrefix)
              .then((images) => reply({ urls: [], images }))
          : this.handlers
              .cache(message.originId, message.url, message.remove)
              .then((urls) => reply({ urls }));
    }
    done.catch((error: unknown) => this.log.warn({ err: error, message }, 'fan-out message failed'));
  }

  /**
   * Subscribes, then applies every purge logged after the last one applied; a purge logged
   * later arrives as a message. At a process's first connection that is the id saved in
   * appliedLogFile; with none there is nothing to catch up on, and the edge starts from the
   * log's end.
   */
  private async subscribeAndCatchUp(connection: number): Promise<void> {
    await this.subscriber.subscribe(EDGE_CHANNEL);
    this.appliedLogId ??= await this.savedLogId();
    if (this.appliedLogId === undefined) {
      const [newest] = await this.subscriber.xrevrange(PURGE_LOG, '+', '-', 'COUNT', 1);
      this.recordApplied(newest?.[0] ?? '0-0');
    } else {
      let batch: [id: string, fields: string[]][];
      do {
        batch = await this.subscriber.xrange(
          PURGE_LOG,
          `(${this.appliedLogId}`,
          '+',
          'COUNT',
          CATCH_UP_BATCH,
        );
        await Promise.all(batch.map(([, fields]) => this.applyLogged(fields)));
        if (batch.length) {
          this.recordApplied(batch.at(-1)![0]);
          this.log.info({ purges: batch.length, through: this.appliedLogId }, 'caught up on missed purges');
        }
      } while (batch.length === CATCH_UP_BATCH);
    }
    // One outlived by its connection (ioredis resends its commands) leaves it to the next.
    if (connection === this.connections) this.caughtUp = true;
  }

  private recordApplied(logId: string): void {
    this.appliedLogId = logId;
    const file = this.appliedLogFile;
    if (!file) return;
    // Under a temporary name, then renamed: the edge's workers share the file (any worker's
    // position holds for the cache directory they share, where every purge is applied).
    const temporary = `${file}.${process.pid}.tmp`;
    this.saving = this.saving
      .then(() => writeFile(temporary, logId))
      .then(() => rename(temporary, file))
      .catch((error: unknown) => this.log.warn({ err: error, file }, 'purge log position not saved'));
  }

  /** The id saved by an earlier process, if any (a torn or foreign file counts as none). */
  private async savedLogId(): Promise<string | undefined> {
    if (!this.appliedLogFile) return undefined;
    const saved = await readFile(this.appliedLogFile, 'utf8').catch(() => '');
    return /^\d+-\d+$/.test(saved) ? saved : undefined;
  }

  /** Applies one purge an edge made (live or from the log). */
  private apply(originId: number, target: PurgeTarget): Promise<unknown> {
    return 'pathPrefix' in target
      ? this.handlers.purgePrefix(originId, target.pathPrefix)
      : this.handlers.purge(originId, target.imagePath);
  }

  private async applyLogged(fields: string[]): Promise<void> {
    const entry: Record<string, string> = {};
    for (let i = 0; i + 1 < fields.length; i += 2) entry[fields[i]!] = fields[i + 1]!;
    const purge = entry as LoggedPurge;
    if (purge.from === this.id) return;
    const originId = Number(purge.originId);
    try {
      if ('url' in purge) await this.handlers.cache(originId, purge.url, true);
      else await this.apply(originId, purge);
    } catch (error) {
      this.log.warn({ err: error, purge }, 'missed purge failed');
    }
  }
}

export class CacheUnreachable extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CacheUnreachable';
  }
}

/**
 * The console server's view of the image cache when the edges are other processes: a cache
 * call is published on the edges' channel, PUBLISH says how many edges received it, and the
 * call waits for that many replies (their URLs, united). So when a purge returns, every edge
 * that was connected has emptied its copy; a purge is also logged in PURGE_LOG, from which an
 * edge that was away applies it when it reconnects. Redis down, or an edge not answering within
 * `timeoutMs`, fails the call (the console shows "cache unavailable" and the user retries).
 */
export class CacheRequester {
  private readonly id = randomUUID();
  private readonly replyChannel = `${REPLY_PREFIX}${this.id}`;
  private readonly publisher: Redis;
  private readonly subscriber: Redis;
  private readonly pending = new Map<string, { replies: Reply[]; arrived: () => void }>();

  constructor(
    url: string,
    private readonly log: Logger,
    private readonly timeoutMs = 3_000,
  ) {
    this.publisher = new Redis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: false, retryStrategy });
    this.subscriber = new Redis(url, { retryStrategy });
    for (const client of [this.publisher, this.subscriber])
      client.on('error', (error: unknown) => log.warn({ err: error }, 'redis error'));
    this.subscriber.on('message', (_channel: string, raw: string) => {
      try {
        const reply = JSON.parse(raw) as Reply;
        const waiting = this.pending.get(reply.id);
        if (!waiting) return;
        waiting.replies.push(reply);
        waiting.arrived();
      } catch {
        // not ours
      }
    });
    // Resubscribed by ioredis after every reconnect.
    this.subscriber
      .subscribe(this.replyChannel)
      .catch((error: unknown) => log.warn({ err: error }, 'redis subscribe failed'));
  }

  get connected(): boolean {
    return this.subscriber.status === 'ready' && this.publisher.status === 'ready';
  }

  async lookup(originId: number, url: string): Promise<string[]> {
    return urlsOf(await this.request(originId, { url, remove: false }));
  }

  async purge(originId: number, url: string): Promise<string[]> {
    return urlsOf(await this.request(originId, { url, remove: true }));
  }

  /** Removes every image under `pathPrefix` from every edge; answers how many images they held in all. */
  async purgePrefix(originId: number, pathPrefix: string): Promise<number> {
    const replies = await this.request(originId, { pathPrefix });
    return replies.reduce((images, reply) => images + (reply.images ?? 0), 0);
  }

  /** Tells every edge to reload the origins now (after an origin change in the console). */
  async originsChanged(): Promise<void> {
    await announceOriginsChanged(this.publisher, this.id);
  }

  async ping(): Promise<void> {
    await this.publisher.ping();
  }

  async close(): Promise<void> {
    this.subscriber.disconnect();
    this.publisher.disconnect();
  }

  /** Every connected edge's reply to one cache call. */
  private async request(
    originId: number,
    call: { url: string; remove: boolean } | { pathPrefix: string },
  ): Promise<Reply[]> {
    if (!this.connected) throw new CacheUnreachable('redis is not connected');
    const id = randomUUID();
    const state = { replies: [] as Reply[], arrived: () => {} };
    this.pending.set(id, state);
    try {
      const message: CacheMessage = {
        from: this.id,
        type: 'cache',
        id,
        replyTo: this.replyChannel,
        originId,
        ...call,
      };
      const removes = 'pathPrefix' in call || call.remove;
      let receivers: number;
      try {
        receivers = removes
          ? await logAndPublish(this.publisher, message)
          : await this.publisher.publish(EDGE_CHANNEL, JSON.stringify(message));
      } catch (error) {
        throw new CacheUnreachable(`redis: ${(error as Error).message}`);
      }
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          reject(new CacheUnreachable(`${state.replies.length} of ${receivers} edges answered in time`));
        }, this.timeoutMs);
        state.arrived = () => {
          if (state.replies.length >= receivers) {
            clearTimeout(timer);
            resolve();
          }
        };
        state.arrived();
      });
      this.log.debug({ originId, removes, edges: receivers }, 'cache call answered by every edge');
      return state.replies;
    } finally {
      this.pending.delete(id);
    }
  }
}

/** The URLs of every edge's replies, united. */
function urlsOf(replies: readonly Reply[]): string[] {
  const urls = new Set<string>();
  for (const reply of replies) for (const found of reply.urls) urls.add(found);
  return [...urls].sort();
}
