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

describe('LoadGuard', () => {
  it('says the thread is saturated while its last window was busier than the limit', () => {
    vi.useFakeTimers();
    const thread = fakeThread();
    const guard = new LoadGuard(0.85, 1_000, thread.measure);
    expect(guard.saturated).toBe(false);
    thread.run(500, 1_000);
    vi.advanceTimersByTime(1_000);
    expect(guard.load).toBe(0.5);
    expect(guard.saturated).toBe(false);
    thread.run(950, 1_000);
    vi.advanceTimersByTime(1_000);
    expect(guard.saturated).toBe(true);
    // Viewers refused, the load falls: the next window takes them again.
    thread.run(600, 1_000);
    vi.advanceTimersByTime(1_000);
    expect(guard.saturated).toBe(false);
    guard.close();
  });

  it('never refuses at a limit of 1', () => {
    vi.useFakeTimers();
    const thread = fakeThread();
    const guard = new LoadGuard(1, 1_000, thread.measure);
    thread.run(1_000, 1_000);
    vi.advanceTimersByTime(1_000);
    expect(guard.load).toBe(1);
    expect(guard.saturated).toBe(false);
    guard.close();
  });
});
