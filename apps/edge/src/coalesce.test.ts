import { describe, expect, it } from 'vitest';
import { Coalescer } from './coalesce.ts';

describe('Coalescer', () => {
  it('runs concurrent calls with one key once and forgets the key afterwards', async () => {
    const coalescer = new Coalescer<number>();
    let runs = 0;
    const work = async () => {
      runs++;
      await new Promise((resolve) => setTimeout(resolve, 10));
      return runs;
    };
    const results = await Promise.all([
      coalescer.run('k', work),
      coalescer.run('k', work),
      coalescer.run('other', work),
    ]);
    expect(results[0]).toBe(results[1]);
    expect(runs).toBe(2);
    await coalescer.run('k', work);
    expect(runs).toBe(3);
  });
});
