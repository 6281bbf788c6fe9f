import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import {
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
  type RateLimiterAbstract,
} from 'rate-limiter-flexible';
import { AppError } from '../http/app-error.ts';

/** At most `points` events per key within `seconds` of the key's first one. */
export interface RateRule {
  points: number;
  seconds: number;
}

/**
 * Guesses at a secret (a password, a second-step code) per key: `attempts` failures within
 * `seconds` lock the key, first for `firstLockSeconds`, then twice as long at each further lock
 * within `seconds`, up to `maxLockSeconds`. A success either clears the key (a pair the owner
 * just proved to hold) or only gives its own attempt back (a shared address, where one person's
 * success must not wipe out someone else's failures).
 */
export interface GuessRule extends RateRule {
  firstLockSeconds: number;
  maxLockSeconds: number;
  clearOnSuccess: boolean;
}

/** A limiter's answer: whether the event may happen, and what the RateLimit headers report. */
export interface Verdict {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Until the key's window (or lock) ends. */
  msBeforeNext: number;
}

/** A guess counted before it is checked; the caller reports how it went. */
export interface Guess {
  failed(): Promise<void>;
  succeeded(): Promise<void>;
}

/** ioredis retries forever, at most every 2 s: a Redis restart is picked up within that. */
const retryStrategy = (times: number) => Math.min(times * 100, 2_000);

/** The ui-api's refusal, its Retry-After rounded up to whole seconds. */
function tooManyAttempts(msBeforeNext: number): AppError {
  return new AppError(
    'too many attempts',
    {},
    { retryAfterSeconds: Math.max(1, Math.ceil(msBeforeNext / 1000)) },
  );
}

/**
 * Consumes one point of `key`. Over the limit the library rejects with its result, which is
 * the verdict here; any other rejection is a fault (for Redis the insurance already answered).
 */
async function consume(
  limiter: RateLimiterAbstract,
  key: string,
): Promise<{ allowed: boolean; result: RateLimiterRes }> {
  try {
    return { allowed: true, result: await limiter.consume(key) };
  } catch (error) {
    if (error instanceof RateLimiterRes) return { allowed: false, result: error };
    throw error;
  }
}

/**
 * Every rate limit and guess limit of a process, on rate-limiter-flexible: in Redis when
 * REDIS_URL is set, so all processes of a fleet count together, else in this process's memory.
 * Counters never touch the database, so a flood costs no writes. With Redis away each limiter
 * falls back to its own in-memory copy (insurance), so an outage neither locks people out nor
 * lets a flood through unlimited; counts are then per process until Redis is back.
 */
export class RateLimits {
  private redis: Redis | undefined;
  private readonly limiters = new Map<string, RateLimiterAbstract>();
  private readonly guessLimits = new Map<string, GuessLimit>();
  private readonly keyPrefix: string;

  constructor(private readonly options: { redisUrl?: string | undefined; log: Logger; keyPrefix?: string }) {
    this.keyPrefix = options.keyPrefix ?? 'ukiyo:rate';
  }

  /** Connected on first use: processes that limit nothing (the edge) open no connection. */
  private store(redisUrl: string): Redis {
    if (!this.redis) {
      // No offline queue and no retries of a command: with Redis down a call fails at once and
      // the insurance limiter answers, instead of requests waiting on a reconnect.
      this.redis = new Redis(redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false, retryStrategy });
      this.redis.on('error', (error: unknown) =>
        this.options.log.warn({ err: error }, 'redis error (rate limits)'),
      );
    }
    return this.redis;
  }

  /**
   * The limiter of a name and rule, one per process: callers that build theirs per route still
   * share one budget. The rule is part of the identity so a changed limit starts a new count
   * in memory; in Redis the name alone keys the counters, as every process has the same rule.
   */
  limiter(name: string, rule: RateRule): RateLimiterAbstract {
    const id = `${name}|${rule.points}/${rule.seconds}`;
    let limiter = this.limiters.get(id);
    if (!limiter) {
      const options = { keyPrefix: `${this.keyPrefix}:${name}`, points: rule.points, duration: rule.seconds };
      const { redisUrl } = this.options;
      limiter = redisUrl
        ? new RateLimiterRedis({
            ...options,
            storeClient: this.store(redisUrl),
            rejectIfRedisNotReady: true,
            insuranceLimiter: new RateLimiterMemory(options),
          })
        : new RateLimiterMemory(options);
      this.limiters.set(id, limiter);
    }
    return limiter;
  }

  /** Counts one event of `key`; over the limit it is refused, never thrown. */
  async take(name: string, rule: RateRule, key: string): Promise<Verdict> {
    const { allowed, result } = await consume(this.limiter(name, rule), key);
    return {
      allowed,
      limit: rule.points,
      remaining: result.remainingPoints,
      msBeforeNext: result.msBeforeNext,
    };
  }

  /** For the ui-api: counts one event of `key`, refusing with 'too many attempts' past the rule. */
  async spend(name: string, rule: RateRule, key: string): Promise<void> {
    const verdict = await this.take(name, rule, key);
    if (!verdict.allowed) throw tooManyAttempts(verdict.msBeforeNext);
  }

  /** The guess limit of a name and rule (see GuessRule), one per process. */
  guesses(name: string, rule: GuessRule): GuessLimit {
    const id = `${name}|${JSON.stringify(rule)}`;
    let limit = this.guessLimits.get(id);
    if (!limit) {
      limit = new GuessLimit(this, name, rule);
      this.guessLimits.set(id, limit);
    }
    return limit;
  }

  /** Counters live on in Redis (or end with the process): nothing to flush. */
  async close(): Promise<void> {
    this.redis?.disconnect();
  }
}

/** See GuessRule. */
export class GuessLimit {
  private readonly attempts: RateLimiterAbstract;
  /** How often the key was locked within the rule's window: each lock lasts twice the last. */
  private readonly locks: RateLimiterAbstract;

  constructor(
    limits: RateLimits,
    name: string,
    private readonly rule: GuessRule,
  ) {
    this.attempts = limits.limiter(name, rule);
    this.locks = limits.limiter(`${name}:locks`, { points: Number.MAX_SAFE_INTEGER, seconds: rule.seconds });
  }

  /**
   * Counts the guess before it is checked, so guesses sent at once cannot all slip past a
   * check made before any of them failed. Throws 'too many attempts' while the key is locked.
   */
  async begin(key: string): Promise<Guess> {
    const { allowed, result } = await consume(this.attempts, key);
    if (!allowed) throw tooManyAttempts(result.msBeforeNext);
    return {
      failed: async () => {
        // This guess used the last attempt: the key locks now, not at the next guess.
        if (result.remainingPoints === 0) await this.lock(key);
      },
      succeeded: async () => {
        if (this.rule.clearOnSuccess) await Promise.all([this.attempts.delete(key), this.locks.delete(key)]);
        else await this.attempts.reward(key);
      },
    };
  }

  private async lock(key: string): Promise<void> {
    const { consumedPoints } = await this.locks.penalty(key);
    const seconds = Math.min(
      this.rule.firstLockSeconds * 2 ** (consumedPoints - 1),
      this.rule.maxLockSeconds,
    );
    await this.attempts.block(key, seconds);
  }
}
