import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AppError } from '../http/app-error.ts';
import { RateLimits, type GuessRule } from './rate-limits.ts';

const log = pino({ level: 'silent' });
const PAIR: GuessRule = {
  points: 5,
  seconds: 86_400,
  firstLockSeconds: 60,
  maxLockSeconds: 200,
  clearOnSuccess: true,
};
const SHARED: GuessRule = { ...PAIR, clearOnSuccess: false };

/** The refusal `begin` throws, or undefined when the guess may go ahead. */
async function refusal(limits: RateLimits, rule: GuessRule, key: string): Promise<AppError | undefined> {
  try {
    await limits.guesses('login', rule).begin(key);
    return undefined;
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
}

async function fail(limits: RateLimits, rule: GuessRule, key: string, times: number) {
  for (let i = 0; i < times; i++) await (await limits.guesses('login', rule).begin(key)).failed();
}

afterEach(() => {
  vi.useRealTimers();
});

describe('RateLimits in memory', () => {
  it('counts events per key and refuses past the rule, with what the headers report', async () => {
    const limits = new RateLimits({ log });
    const rule = { points: 2, seconds: 60 };
    expect(await limits.take('api', rule, 'a')).toMatchObject({ allowed: true, limit: 2, remaining: 1 });
    expect(await limits.take('api', rule, 'a')).toMatchObject({ allowed: true, remaining: 0 });
    const refused = await limits.take('api', rule, 'a');
    expect(refused).toMatchObject({ allowed: false, remaining: 0 });
    expect(refused.msBeforeNext).toBeGreaterThan(59_000);
    expect(await limits.take('api', rule, 'b')).toMatchObject({ allowed: true });
    // Another name is another budget for the same key.
    expect(await limits.take('other', rule, 'a')).toMatchObject({ allowed: true });
  });

  it('shares one limiter per name and rule, and starts afresh when the rule changes', () => {
    const limits = new RateLimits({ log });
    const rule = { points: 3, seconds: 60 };
    expect(limits.limiter('api', rule)).toBe(limits.limiter('api', { ...rule }));
    expect(limits.limiter('api', { points: 4, seconds: 60 })).not.toBe(limits.limiter('api', rule));
  });

  it('spend refuses with too many attempts and a Retry-After', async () => {
    const limits = new RateLimits({ log });
    const rule = { points: 1, seconds: 30 };
    await limits.spend('mail', rule, 'u1');
    const error = await limits.spend('mail', rule, 'u1').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({ code: 'too many attempts', headers: { retryAfterSeconds: 30 } });
  });

  it('locks a key on its fifth failure, for longer at each further lock, up to the cap', async () => {
    vi.useFakeTimers();
    const limits = new RateLimits({ log });
    await fail(limits, PAIR, 'k', 4);
    expect(await refusal(limits, PAIR, 'k')).toBeUndefined();
    // That fifth guess is counted before it is checked: a sixth sent meanwhile is refused.
    expect((await refusal(limits, PAIR, 'k'))?.code).toBe('too many attempts');

    await fail(limits, PAIR, 'k2', 5);
    expect((await refusal(limits, PAIR, 'k2'))?.headers.retryAfterSeconds).toBe(60);
    // Another key is not affected.
    expect(await refusal(limits, PAIR, 'k3')).toBeUndefined();

    vi.advanceTimersByTime(61_000);
    await fail(limits, PAIR, 'k2', 5);
    expect((await refusal(limits, PAIR, 'k2'))?.headers.retryAfterSeconds).toBe(120);
    vi.advanceTimersByTime(121_000);
    await fail(limits, PAIR, 'k2', 5);
    expect((await refusal(limits, PAIR, 'k2'))?.headers.retryAfterSeconds).toBe(200);
  });

  it('clears a pair on success, but only gives the attempt back on a shared key', async () => {
    const limits = new RateLimits({ log });
    await fail(limits, PAIR, 'pair', 4);
    await (await limits.guesses('login', PAIR).begin('pair')).succeeded();
    await fail(limits, PAIR, 'pair', 4);
    expect(await refusal(limits, PAIR, 'pair')).toBeUndefined();

    await fail(limits, SHARED, 'address', 4);
    await (await limits.guesses('login', SHARED).begin('address')).succeeded();
    await fail(limits, SHARED, 'address', 1);
    expect((await refusal(limits, SHARED, 'address'))?.code).toBe('too many attempts');
  });
});

describe('RateLimits in Redis', () => {
  const redisUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

  it('counts across processes (two instances, one Redis)', async () => {
    const keyPrefix = `ukiyo-test:${randomBytes(6).toString('hex')}`;
    const [one, two] = [
      new RateLimits({ redisUrl, log, keyPrefix }),
      new RateLimits({ redisUrl, log, keyPrefix }),
    ];
    try {
      const rule = { points: 3, seconds: 60 };
      // Until its connection is ready each instance counts in its own memory (the insurance):
      // wait until both count in Redis, together.
      const warm = { points: 1_000_000, seconds: 60 };
      await vi.waitFor(async () => {
        const first = await one.take('warm', warm, 'x');
        expect((await two.take('warm', warm, 'x')).remaining).toBe(first.remaining - 1);
      });
      await one.take('api', rule, 'token');
      await two.take('api', rule, 'token');
      expect(await one.take('api', rule, 'token')).toMatchObject({ allowed: true, remaining: 0 });
      expect(await two.take('api', rule, 'token')).toMatchObject({ allowed: false });

      await fail(one, PAIR, 'pair', 3);
      await fail(two, PAIR, 'pair', 2);
      expect((await refusal(one, PAIR, 'pair'))?.headers.retryAfterSeconds).toBe(60);
    } finally {
      await Promise.all([one.close(), two.close()]);
    }
  });

  it('falls back to memory when Redis cannot be reached: neither locked out nor unlimited', async () => {
    const limits = new RateLimits({ redisUrl: 'redis://127.0.0.1:1', log });
    try {
      const rule = { points: 2, seconds: 60 };
      expect(await limits.take('api', rule, 'x')).toMatchObject({ allowed: true });
      expect(await limits.take('api', rule, 'x')).toMatchObject({ allowed: true });
      expect(await limits.take('api', rule, 'x')).toMatchObject({ allowed: false });
    } finally {
      await limits.close();
    }
  });
});
