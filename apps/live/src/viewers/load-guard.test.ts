import type { EventLoopUtilization } from 'node:perf_hooks';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LoadGuard } from './load-guard.ts';

afterEach(() => {
  vi.useRealTimers();
});

/** performance.eventLoopUtilization over a thread busy `busyMs` of each elapsed window. */
function fakeThread() {
  let active = 0;
  let idle = 0;
  const reading = (): EventLoopUtilization => ({ active, idle, utilization: 0 });
  const measure = (current?: EventLoopUtilization, previous?: EventLoopUtilization) => {
    if (!current || !previous) return reading();
    const activeMs = current.active - previous.active;
    const idleMs = current.idle - previous.idle;
    return { active: activeMs, idle: idleMs, utilization: activeMs / (activeMs + idleMs) };
  };
  return {
    measure,
    run: (busyMs: number, windowMs: number) => {
      active += busyMs;
      idle += windowMs - busyMs;
    },
  };
}

/** A guard over a fake thread, on fake timers; `window` runs one window busy `busyMs` of 1 s. */
function guarded(max: number) {
  vi.useFakeTimers();
  const thread = fakeThread();
  const guard = new LoadGuard(max, 1_000, thread.measure, () => Date.now());
  return {
    guard,
    window: (busyMs: number) => {
      thread.run(busyMs, 1_000);
      vi.advanceTimersByTime(1_000);
    },
    /** How many admit() takes before refusing (at most `limit`). */
    admitted: (limit = 1_000) => {
      let taken = 0;
      while (taken < limit && guard.admit()) taken++;
      return taken;
    },
  };
}

describe('LoadGuard', () => {
  it('tells its listener after each window, once that window has set the room the next admits', () => {
    const { guard, window } = guarded(0.85);
    const admittedWhenTold: boolean[] = [];
    guard.whenWindowCloses(() => admittedWhenTold.push(guard.admit()));
    window(950);
    window(100);
    expect(admittedWhenTold).toEqual([false, true]);
    guard.close();
  });

  it('refuses every viewer while its last window was busier than the limit', () => {
    const { guard, window, admitted } = guarded(0.85);
    window(950);
    expect(guard.load).toBe(0.95);
    expect(guard.admit()).toBe(false);
    // Viewers refused, the load falls: the next window takes them again.
    window(100);
    expect(guard.admit()).toBe(true);
    expect(admitted()).toBeGreaterThan(0);
    guard.close();
  });

  it('admits a burst of joins only as fast as their load can show', () => {
    const { guard, window, admitted } = guarded(0.85);
    // Nothing known of what a viewer costs: twenty a window.
    expect(admitted()).toBe(20);
    // 20 viewers held for a whole window at 0.2: 0.01 each, room for 85 in all.
    window(200);
    expect(admitted()).toBe(65);
    // Full at 85, short of the limit: none more.
    window(850);
    expect(guard.admit()).toBe(false);
    guard.close();
  });

  it('charges viewers what the thread does beyond its recent load without them, at least a quarter of it', () => {
    const { guard, window, admitted } = guarded(0.85);
    // A publisher's ingest: 0.2 of the thread with no viewer.
    window(200);
    expect(admitted()).toBe(20);
    // 20 viewers add 0.1: 0.005 each, room for 170 in all, not the 56 the whole thread says.
    window(300);
    expect(admitted()).toBe(150);
    // Without the publisher (the load without viewers now stale), 170 viewers at 0.25: at least a
    // quarter of it charged to them, 0.0625, room for 2,312 in all.
    window(250);
    expect(admitted(5_000)).toBe(2_142);
    guard.close();
  });

  it('charges viewers the whole thread once its load without them is a minute old', () => {
    const { guard, window, admitted } = guarded(0.85);
    window(200);
    admitted(20);
    // Past a minute since the window without viewers.
    for (let second = 0; second <= 60; second++) window(300);
    // 20 viewers at 0.3: 0.015 each, room for 56 in all.
    expect(admitted()).toBe(36);
    guard.close();
  });

  it('lets viewers of an idle thread at most double per window, not in unbounded', () => {
    const { guard, window, admitted } = guarded(0.85);
    expect(admitted()).toBe(20);
    // Twenty viewers of a publisher that has not started: they cost nothing yet, which says
    // nothing of what they will cost.
    window(0);
    expect(admitted()).toBe(20);
    window(10);
    expect(admitted()).toBe(40);
    // Once the stream runs, the estimate takes over: 80 viewers at 0.4, room for 170.
    window(400);
    expect(admitted()).toBe(90);
    guard.close();
  });

  it('frees the room of viewers that left', () => {
    const { guard, window, admitted } = guarded(0.85);
    admitted(10);
    window(100);
    admitted(10);
    window(200);
    // 20 viewers at 0.2: 0.01 each, room for 85; ten of them leave.
    for (let viewer = 0; viewer < 10; viewer++) guard.left();
    window(100);
    // 10 viewers at 0.1: 0.01 each, room for 75 more.
    expect(admitted()).toBe(75);
    guard.close();
  });

  it('sheds a tenth of its viewers once the thread starved two windows in a row without joins', () => {
    const { guard, window, admitted } = guarded(0.85);
    const shed: number[] = [];
    guard.whenStarving((count) => shed.push(count));
    admitted(20);
    window(200);
    admitted(41);
    // The joins' own window, then a moment's spike: no one shed.
    window(990);
    window(500);
    window(990);
    expect(shed).toEqual([]);
    expect(guard.admit()).toBe(false);
    window(990);
    expect(shed).toEqual([7]);
    for (let viewer = 0; viewer < 7; viewer++) guard.left();
    // The next shed is decided on two windows after the last.
    window(1_000);
    expect(shed).toEqual([7]);
    window(1_000);
    expect(shed).toEqual([7, 6]);
    window(800);
    expect(shed).toEqual([7, 6]);
    guard.close();
  });

  it('starves at its limit when that is above 0.97: the operator says the thread keeps up that busy', () => {
    const { guard, window, admitted } = guarded(0.999);
    const shed: number[] = [];
    guard.whenStarving((count) => shed.push(count));
    admitted(20);
    window(500);
    window(990);
    window(990);
    expect(shed).toEqual([]);
    window(1_000);
    window(1_000);
    expect(shed).toEqual([2]);
    guard.close();
  });

  it('never refuses nor sheds at a limit of 1', () => {
    const { guard, window, admitted } = guarded(1);
    const shed: number[] = [];
    guard.whenStarving((count) => shed.push(count));
    window(1_000);
    expect(guard.load).toBe(1);
    expect(admitted(500)).toBe(500);
    window(1_000);
    window(1_000);
    expect(shed).toEqual([]);
    guard.close();
  });
});
