import { afterEach, describe, expect, it, vi } from 'vitest';
import { HlsAdmission } from './hls-admission.ts';

/** A load guard that admits while `room` lasts, counts who is held, and starves on demand. */
function stubGuard(room: number) {
  const guard = {
    room,
    held: 0,
    shed: (_count: number) => {},
    admit: () => {
      if (guard.room <= 0) return false;
      guard.room--;
      guard.held++;
      return true;
    },
    left: () => {
      guard.held--;
    },
    whenStarving: (shed: (count: number) => void) => {
      guard.shed = shed;
    },
    close: () => {},
  };
  return guard;
}

afterEach(() => {
  vi.useRealTimers();
});

describe('HlsAdmission', () => {
  it('keeps serving the clients it admitted when the guard has no room for more', () => {
    const guard = stubGuard(2);
    const admission = new HlsAdmission(guard, 15_000, () => {});
    expect(admission.admit('channel\n127.0.0.1 a', 0)).toBe(true);
    expect(admission.admit('channel\n127.0.0.1 b', 0)).toBe(true);
    expect(admission.admit('channel\n127.0.0.1 c', 0)).toBe(false);
    // The admitted ones' reloads and parts go on, and count once each.
    for (let at = 400; at <= 4_000; at += 400) expect(admission.admit('channel\n127.0.0.1 a', at)).toBe(true);
    expect(admission.admit('channel\n127.0.0.1 b', 4_000)).toBe(true);
    expect(guard.held).toBe(2);
  });

  it('forgets a client quiet for longer than quietMs: the guard gets its room back', () => {
    const guard = stubGuard(1);
    const admission = new HlsAdmission(guard, 15_000, () => {});
    expect(admission.admit('gone', 0)).toBe(true);
    expect(admission.admit('waiting', 10_000)).toBe(false);
    guard.room = 1;
    // Another's request notices the quiet one is gone, before asking the guard for room.
    expect(admission.admit('waiting', 15_001)).toBe(true);
    expect(guard.held).toBe(1);
    // Back after its absence, it asks like a newcomer.
    expect(admission.admit('gone', 15_002)).toBe(false);
  });

  it('forgets the quiet without a request, so that the guard counts only who still watches', () => {
    vi.useFakeTimers();
    const guard = stubGuard(2);
    const admission = new HlsAdmission(guard, 15_000, () => {});
    expect(admission.admit('watching', Date.now())).toBe(true);
    expect(admission.admit('leaving', Date.now())).toBe(true);
    vi.advanceTimersByTime(10_000);
    expect(admission.admit('watching', Date.now())).toBe(true);
    vi.advanceTimersByTime(6_000);
    expect(guard.held).toBe(1);
    admission.close();
  });

  it('sheds the newest admitted first when the guard starves, and says how many', () => {
    const guard = stubGuard(3);
    const shed: number[] = [];
    const admission = new HlsAdmission(guard, 15_000, (count) => shed.push(count));
    for (const client of ['first', 'second', 'third']) expect(admission.admit(client, 0)).toBe(true);
    // The oldest asked last: shedding goes by admission, not by the latest request.
    expect(admission.admit('first', 100)).toBe(true);
    guard.shed(2);
    expect(shed).toEqual([2]);
    expect(guard.held).toBe(1);
    expect(admission.admit('first', 200)).toBe(true);
    expect(admission.admit('third', 200)).toBe(false);
    expect(admission.admit('second', 200)).toBe(false);
  });
});
