import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';

/** Every edge subscribes here; console servers publish here and never subscribe. */
export const EDGE_CHANNEL = 'ukiyo:edge';
const REPLY_PREFIX = 'ukiyo:reply:';

type Message =
  | { from: string; type: 'purge'; originId: number; imagePath: string }
  | { from: string; type: 'origins' }
  /** A console server's cache call: every edge answers on `replyTo` with its own URLs. */
  | {
      from: string;
      type: 'cache';
      id: string;
      replyTo: string;
      originId: number;
      url: string;
      remove: boolean;
    };

interface Reply {
  id: string;
  from: string;
  urls: string[];
}

export interface FanOutHandlers {
  purge(originId: number, imagePath: string): Promise<unknown>;
  originsChanged(): Promise<unknown>;
  /** This edge's cached variants of one URL, removed first when `remove`. */
  cache(originId: number, url: string, remove: boolean): Promise<string[]>;
}

/** ioredis retries forever, at most every 2 s: a Redis restart is picked up within that. */
const retryStrategy = (times: number) => Math.min(times * 100, 2_000);

/**
 * Cross-node messages over Redis pub/sub: a purge made on one edge empties every edge's
 * cache, an edge that sees an origin change makes the others reload at once instead of at
 * their next poll, and console servers' cache calls reach every edge (see CacheRequester).
 * Without REDIS_URL a single node needs none of it. When Redis is down the edge keeps serving;
 * ioredis reconnects and resubscribes by itself.
 */
export class FanOut {
  private readonly id = randomUUID();
  private readonly publisher: Redis;
  private readonly subscriber: Redis;

  constructor(url: string, handlers: FanOutHandlers, log: Logger) {
    // No offline queue: a publish while Redis is down fails at once instead of piling up.
    this.publisher = new Redis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: false, retryStrategy });
    this.subscriber = new Redis(url, { retryStrategy });
    for (const client of [this.publisher, this.subscriber])
      client.on('error', (error: unknown) => log.warn({ err: error }, 'redis error'));
    this.subscriber.on('message', (_channel: string, raw: string) => {
      let message: Message;
      try {
        message = JSON.parse(raw) as Message;
      } catch {
        return;
      }
      if (message.from === this.id) return;
      let done: Promise<unknown>;
      if (message.type === 'purge') done = handlers.purge(message.originId, message.imagePath);
      else if (message.type === 'origins') done = handlers.originsChanged();
      else {
        const { id, replyTo } = message;
        if (!replyTo.startsWith(REPLY_PREFIX)) return;
        done = handlers
          .cache(message.originId, message.url, message.remove)
          .then((urls) => this.publisher.publish(replyTo, JSON.stringify({ id, from: this.id, urls })));
      }
      done.catch((error: unknown) => log.warn({ err: error, message }, 'fan-out message failed'));
    });
  }

  /** Both connections ready: purges and config changes reach this edge. */
  get connected(): boolean {
    return this.subscriber.status === 'ready' && this.publisher.status === 'ready';
  }

  async start(): Promise<void> {
    await this.subscriber.subscribe(EDGE_CHANNEL);
  }

  async publishPurge(originId: number, imagePath: string): Promise<void> {
    await this.publish({ from: this.id, type: 'purge', originId, imagePath });
  }

  async publishOriginsChanged(): Promise<void> {
    await this.publish({ from: this.id, type: 'origins' });
  }

  async ping(): Promise<void> {
    await this.publisher.ping();
  }

  async close(): Promise<void> {
    this.subscriber.disconnect();
    this.publisher.disconnect();
  }

  private async publish(message: Message): Promise<void> {
    await this.publisher.publish(EDGE_CHANNEL, JSON.stringify(message));
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
 * that was connected has emptied its copy. Redis down, or an edge not answering within
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

  lookup(originId: number, url: string): Promise<string[]> {
    return this.request(originId, url, false);
  }

  purge(originId: number, url: string): Promise<string[]> {
    return this.request(originId, url, true);
  }

  /** Tells every edge to reload the origins now (after an origin change in the console). */
  async originsChanged(): Promise<void> {
    await this.publisher.publish(EDGE_CHANNEL, JSON.stringify({ from: this.id, type: 'origins' }));
  }

  async ping(): Promise<void> {
    await this.publisher.ping();
  }

  async close(): Promise<void> {
    this.subscriber.disconnect();
    this.publisher.disconnect();
  }

  private async request(originId: number, url: string, remove: boolean): Promise<string[]> {
    if (!this.connected) throw new CacheUnreachable('redis is not connected');
    const id = randomUUID();
    const state = { replies: [] as Reply[], arrived: () => {} };
    this.pending.set(id, state);
    try {
      const message: Message = {
        from: this.id,
        type: 'cache',
        id,
        replyTo: this.replyChannel,
        originId,
        url,
        remove,
      };
      let receivers: number;
      try {
        receivers = await this.publisher.publish(EDGE_CHANNEL, JSON.stringify(message));
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
      const urls = new Set<string>();
      for (const reply of state.replies) for (const found of reply.urls) urls.add(found);
      this.log.debug({ originId, remove, edges: receivers }, 'cache call answered by every edge');
      return [...urls].sort();
    } finally {
      this.pending.delete(id);
    }
  }
}
