import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';

const CHANNEL = 'ukiyo:edge';

type Message =
  { from: string; type: 'purge'; originId: number; imagePath: string } | { from: string; type: 'origins' };

export interface FanOutHandlers {
  purge(originId: number, imagePath: string): Promise<unknown>;
  originsChanged(): Promise<unknown>;
}

/**
 * Cross-node messages over Redis pub/sub: a purge made on one edge empties every edge's
 * cache, and an edge that sees an origin change makes the others reload at once instead of
 * at their next poll. Without REDIS_URL a single node needs none of it.
 */
export class FanOut {
  private readonly id = randomUUID();
  private readonly publisher: Redis;
  private readonly subscriber: Redis;

  constructor(url: string, handlers: FanOutHandlers, log: Logger) {
    this.publisher = new Redis(url, { lazyConnect: false, maxRetriesPerRequest: 2 });
    this.subscriber = new Redis(url, { lazyConnect: false });
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
      const done =
        message.type === 'purge'
          ? handlers.purge(message.originId, message.imagePath)
          : handlers.originsChanged();
      done.catch((error: unknown) => log.warn({ err: error, message }, 'fan-out message failed'));
    });
  }

  async start(): Promise<void> {
    await this.subscriber.subscribe(CHANNEL);
  }

  async publishPurge(originId: number, imagePath: string): Promise<void> {
    await this.publish({ from: this.id, type: 'purge', originId, imagePath });
  }

  async publishOriginsChanged(): Promise<void> {
    await this.publish({ from: this.id, type: 'origins' });
  }

  async close(): Promise<void> {
    this.subscriber.disconnect();
    this.publisher.disconnect();
  }

  private async publish(message: Message): Promise<void> {
    await this.publisher.publish(CHANNEL, JSON.stringify(message));
  }
}
