import { describe, expect, it } from 'vitest';
import { MediaWatch } from './media-watch.ts';

describe('MediaWatch', () => {
  it('finds a publisher quiet once it has sent nothing for the timeout', () => {
    const watch = new MediaWatch(10_000, 1_000, 0);
    for (let at = 1_000; at <= 10_000; at += 1_000) expect(watch.quiet(at)).toBe(false);
    watch.received(10_500);
    for (let at = 11_000; at <= 20_000; at += 1_000) expect(watch.quiet(at)).toBe(false);
    expect(watch.quiet(21_000)).toBe(true);
  });

  it('passes over the first check after the thread was held, and decides on the next', () => {
    const watch = new MediaWatch(10_000, 1_000, 0);
    watch.received(1_000);
    // Held from 1.5 s to 13 s; its media waited in the socket, read after this check.
    expect(watch.quiet(13_000)).toBe(false);
    watch.received(13_010);
    expect(watch.quiet(14_000)).toBe(false);
    // A publisher that had gone is ended by the next check.
    const gone = new MediaWatch(10_000, 1_000, 0);
    expect(gone.quiet(13_000)).toBe(false);
    expect(gone.quiet(14_000)).toBe(true);
  });

  it('passes over no two checks in a row, however late each comes', () => {
    const watch = new MediaWatch(10_000, 1_000, 0);
    expect(watch.quiet(12_000)).toBe(false);
    expect(watch.quiet(15_000)).toBe(true);
  });
});
