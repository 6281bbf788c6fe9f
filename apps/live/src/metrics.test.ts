import { describe, expect, it } from 'vitest';
import { ViewerTracker } from './metrics.ts';

describe('ViewerTracker', () => {
  it('counts clients per channel seen within the window and forgets older ones', () => {
    const viewers = new ViewerTracker(10_000);
    viewers.seen('a', '10.0.0.1 player', 0);
    viewers.seen('a', '10.0.0.2 player', 1_000);
    viewers.seen('b', '10.0.0.1 player', 2_000);
    viewers.seen('a', '10.0.0.1 player', 3_000);
    expect(viewers.count(3_000)).toBe(3);
    // 10.0.0.2 stopped at 1 s; the others went on to 3 s and 2 s.
    expect(viewers.count(11_500)).toBe(2);
    expect(viewers.count(12_500)).toBe(1);
    expect(viewers.count(13_500)).toBe(0);
  });
});
