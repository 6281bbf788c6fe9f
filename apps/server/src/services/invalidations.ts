import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';

/** Console server processes publish and subscribe here (edges have a channel of their own). */
export const CONSOLE_CHANNEL = 'ukiyo:console';
const ACK_PREFIX = 'ukiyo:console-ack:';

/**
 * What changed, for the caches kept in memory: a session, a user (disabled, permissions,
 * restrictions), an organization, an API token (disabled, revoked) or an organization's origins
 * (their settings, rules, ACL, certificate).
 */
export interface Invalidation {
  sessionHash?: string;
  userId?: number;
  organizationId?: number;
  tokenId?: number;
  originsOf?: number;
}

/** `everything`: this process may have missed invalidations (it was not subscribed). */
export type InvalidationListener = (event: Invalidation | 'everything') => void;

interface Message {
  from: string;
  id: string;
  replyTo: string;
  event: Invalidation;
}

/** ioredis retries forever, at most every 2 s (as the edges' fan-out does). */
const retryStrategy = (times: number) => Math.min(times * 100, 2_000);

/**
 * Tells every console server process of a change, so caches in their memory can answer without
 * the database and still never outlive a revocation. Without REDIS_URL there is one process and
 * the change is applied here only. With it, `publish` applies it here, publishes it on
 * CONSOLE_CHANNEL and waits (up to `timeoutMs`) until every subscribed process has acknowledged
 * it, as the cache calls to the edges wait for every edge: when a revocation's call returns, no
 * process answers from the revoked entry any more. A process not subscribed (Redis away, or not
 * yet connected) may have missed changes, so `live` is false and the caches answer from the
 * database until it subscribes again, when they are emptied.
 */
export class Invalidations {
  private readonly id = randomUUID();
  private readonly replyTo = `${ACK_PREFIX}${this.id}`;
  private readonly listeners: InvalidationListener[] = [];
  private publisher: Redis | undefined;
  private subscriber: Redis | undefined;
  private subscribed = false;
  private readonly pending = new Map<string, () => void>();

  /** Without `fleet`: a single node, where changes are applied in this process only. */
  constructor(private readonly fleet?: { redisUrl: string; log: Logger; timeoutMs: number }) {}

  /**
   * Connects to Redis and subscribes: console servers only (startConsoleServer), as only they
   * keep what changes invalidate. Edge and live processes share the deps but never start it,
   * and so neither take Redis connections for it nor are waited for.
   */
  start(): void {
    if (!this.fleet || this.subscriber) return;
    const { redisUrl, log } = this.fleet;
    this.publisher = new Redis(redisUrl, {
      maxRetriesPerRequest: 1,
      enableOfflineQueue: false,
      retryStrategy,
    });
    // Subscribed by hand on every connection (not by ioredis's resubscription, which runs
    // unseen), so `live` turns true only once the subscription holds.
    const subscriber = new Redis(redisUrl, { retryStrategy, autoResubscribe: false });
    this.subscriber = subscriber;
    for (const client of [this.publisher, subscriber])
      client.on('error', (error: unknown) => log.warn({ err: error }, 'redis error'));
    subscriber.on('message', (channel: string, raw: string) => this.receive(channel, raw));
    subscriber.on('close', () => {
      this.subscribed = false;
    });
    subscriber.on('ready', () => {
      subscriber
        .subscribe(CONSOLE_CHANNEL, this.replyTo)
        .then(() => {
          // Whatever was cached before may have missed a change while no subscription held.
          this.notify('everything');
          this.subscribed = subscriber.status === 'ready';
        })
        .catch((error: unknown) => log.warn({ err: error }, 'redis subscribe failed'));
    });
  }

  /** Whether caches may answer from memory: every change reaches this process. */
  get live(): boolean {
    return !this.fleet || this.subscribed;
  }

  on(listener: InvalidationListener): void {
    this.listeners.push(listener);
  }

  /**
   * Applies `event` in this process, then in every other one. A process that does not confirm
   * in time is logged, not waited for: the change itself is already stored.
   */
  async publish(event: Invalidation): Promise<void> {
    this.notify(event);
    if (!this.publisher) return;
    const message: Message = { from: this.id, id: randomUUID(), replyTo: this.replyTo, event };
    // Acknowledgements may come in before PUBLISH's own answer says how many to expect.
    const state = { acks: 0, arrived: () => {} };
    this.pending.set(message.id, () => {
      state.acks++;
      state.arrived();
    });
    let timer: NodeJS.Timeout | undefined;
    try {
      const receivers = await this.publisher.publish(CONSOLE_CHANNEL, JSON.stringify(message));
      const confirmed = await new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), this.fleet?.timeoutMs);
        state.arrived = () => {
          if (state.acks >= receivers) resolve(true);
        };
        state.arrived();
      });
      if (!confirmed)
        this.fleet?.log.warn(
          { event, receivers, confirmed: state.acks },
          'invalidation not confirmed by every server in time',
        );
    } catch (error) {
      this.fleet?.log.warn({ err: error, event }, 'invalidation not published');
    } finally {
      clearTimeout(timer);
      this.pending.delete(message.id);
    }
  }

  async close(): Promise<void> {
    this.subscriber?.disconnect();
    this.publisher?.disconnect();
  }

  private notify(event: Invalidation | 'everything'): void {
    for (const listener of this.listeners) listener(event);
  }

  private receive(channel: string, raw: string): void {
    let message: Message;
    try {
      message = JSON.parse(raw) as Message;
    } catch {
      return;
    }
    if (channel === this.replyTo) {
      this.pending.get(message.id)?.();
      return;
    }
    if (message.from !== this.id) this.notify(message.event);
    if (!message.replyTo?.startsWith(ACK_PREFIX)) return;
    this.publisher
      ?.publish(message.replyTo, JSON.stringify({ id: message.id }))
      .catch((error: unknown) => this.fleet?.log.warn({ err: error }, 'invalidation not acknowledged'));
  }
}
