import { describe, expect, it } from 'vitest';
import { Invalidations } from './invalidations.ts';
import { ORIGIN_LIST_MAX_AGE_MS, OriginLists } from './origin-lists.ts';

function lists() {
  const clock = { now: 1_000_000 };
  const invalidations = new Invalidations();
  const memo = new OriginLists<string>(invalidations, () => clock.now);
  let reads = 0;
  const load = async () => `read ${++reads}`;
  return { clock, invalidations, memo, load, reads: () => reads };
}

describe('OriginLists', () => {
  it('answers concurrent and later calls from one read until it is too old', async () => {
    const { clock, memo, load, reads } = lists();
    expect(await Promise.all([memo.of(1, load), memo.of(1, load)])).toEqual(['read 1', 'read 1']);
    clock.now += ORIGIN_LIST_MAX_AGE_MS;
    expect(await memo.of(1, load)).toBe('read 1');
    clock.now += 1;
    expect(await memo.of(1, load)).toBe('read 2');
    expect(await memo.of(2, load)).toBe('read 3');
    expect(reads()).toBe(3);
  });

  it('reads again at once after a change to the organization’s origins or the organization', async () => {
    const { invalidations, memo, load } = lists();
    await memo.of(1, load);
    await memo.of(2, load);
    await invalidations.publish({ originsOf: 1 });
    expect(await memo.of(1, load)).toBe('read 3');
    expect(await memo.of(2, load)).toBe('read 2');
    await invalidations.publish({ organizationId: 2 });
    expect(await memo.of(2, load)).toBe('read 4');
    await invalidations.publish({ userId: 1 });
    expect(await memo.of(1, load)).toBe('read 3');
  });

  it('keeps no failed read', async () => {
    const { memo, load } = lists();
    await expect(memo.of(1, () => Promise.reject(new Error('database away')))).rejects.toThrow(
      'database away',
    );
    expect(await memo.of(1, load)).toBe('read 1');
  });
});
