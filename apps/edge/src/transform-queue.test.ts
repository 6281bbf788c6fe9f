import { describe, expect, it, vi } from 'vitest';
import { Overloaded, TransformQueue } from './transform-queue.ts';

const tick = (ms = 5) => new Promise((resolve) => setTimeout(resolve, ms));

/** A task that runs until released, recording its start. */
function gate(log: string[], name: string) {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return {
    task: async () => {
      log.push(name);
      await opened;
      return name;
    },
    open: () => open(),
  };
}

describe('TransformQueue', () => {
  it('never runs more than its concurrency at once', async () => {
    const queue = new TransformQueue({
      concurrency: 2,
      maxWaiting: 10,
      maxWaitingBytes: 1e9,
      maxWaitMs: 1_000,
    });
    let active = 0;
    let peak = 0;
    await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        queue.run(`t${i % 2}`, 1, async () => {
          peak = Math.max(peak, ++active);
          await tick();
          active--;
        }),
      ),
    );
    expect(peak).toBe(2);
    expect(queue.running).toBe(0);
  });

  it('gives freed slots to tenants in turn, not in arrival order', async () => {
    const queue = new TransformQueue({
      concurrency: 1,
      maxWaiting: 10,
      maxWaitingBytes: 1e9,
      maxWaitMs: 1_000,
    });
    const started: string[] = [];
    const first = gate(started, 'flood-0');
    const runs = [queue.run('flood', 1, first.task)];
    const later = ['flood-1', 'flood-2', 'flood-3', 'quiet-1'].map((name) => {
      const g = gate(started, name);
      runs.push(queue.run(name.split('-')[0]!, 1, g.task));
      return g;
    });
    first.open();
    for (const g of later) g.open();
    await Promise.all(runs);
    // The quiet tenant came last but runs second: its turn comes before the flood's next.
    expect(started).toEqual(['flood-0', 'flood-1', 'quiet-1', 'flood-2', 'flood-3']);
  });

  it('refuses past its waiting room, and one tenant may take only half of it', async () => {
    const queue = new TransformQueue({
      concurrency: 1,
      maxWaiting: 4,
      maxWaitingBytes: 1e9,
      maxWaitMs: 1_000,
    });
    const log: string[] = [];
    const running = gate(log, 'running');
    const held = [queue.run('a', 1, running.task)];
    const waiting = [gate(log, 'a1'), gate(log, 'a2')];
    for (const g of waiting) held.push(queue.run('a', 1, g.task));
    expect(queue.refusal('a')).toBeInstanceOf(Overloaded);
    await expect(queue.run('a', 1, async () => 'a3')).rejects.toBeInstanceOf(Overloaded);
    expect(queue.refusal('b')).toBeNull();
    const others = [gate(log, 'b1'), gate(log, 'c1')];
    for (const [i, g] of others.entries()) held.push(queue.run(i === 0 ? 'b' : 'c', 1, g.task));
    await expect(queue.run('d', 1, async () => 'd1')).rejects.toThrow(/too many conversions are waiting/);
    running.open();
    for (const g of [...waiting, ...others]) g.open();
    await Promise.all(held);
    expect(queue.queued).toBe(0);
  });

  it('refuses a transform that waited too long, and forgets it', async () => {
    const queue = new TransformQueue({ concurrency: 1, maxWaiting: 4, maxWaitingBytes: 1e9, maxWaitMs: 20 });
    const running = gate([], 'running');
    const held = queue.run('a', 1, running.task);
    const late = queue.run('b', 1, async () => 'never');
    await expect(late).rejects.toMatchObject({ retryAfterSeconds: 1 });
    expect(queue.queued).toBe(0);
    running.open();
    await held;
    expect(await queue.run('b', 1, async () => 'now')).toBe('now');
  });

  it('refuses at once what would not start within the deadline by the running mean of durations', async () => {
    const queue = new TransformQueue({
      concurrency: 1,
      maxWaiting: 10,
      maxWaitingBytes: 1e9,
      maxWaitMs: 100,
    });
    await queue.run('a', 1, () => tick(60));
    const running = gate([], 'running');
    const held = [queue.run('a', 1, running.task)];
    // One waiting starts in about 60 ms; a second would wait about 120.
    expect(queue.refusal('b')).toBeNull();
    const waiting = gate([], 'waiting');
    held.push(queue.run('b', 1, waiting.task));
    expect(queue.refusal('c')).toMatchObject({ reason: 'would-wait-too-long', retryAfterSeconds: 1 });
    running.open();
    waiting.open();
    await Promise.all(held);
  });

  it('admits a burst up to the deadline, and past a second of standing queue two durations of wait only', async () => {
    vi.useFakeTimers({ toFake: ['performance'] });
    try {
      const queue = new TransformQueue({
        concurrency: 1,
        maxWaiting: 10,
        maxWaitingBytes: 1e9,
        maxWaitMs: 10_000,
      });
      await queue.run('a', 1, async () => vi.advanceTimersByTime(20));
      const running = gate([], 'running');
      const held = [queue.run('a', 1, running.task)];
      const burst = [gate([], 'b1'), gate([], 'b2'), gate([], 'b3')];
      for (const g of burst) {
        expect(queue.refusal('b')).toBeNull();
        held.push(queue.run('b', 1, g.task));
      }
      // A fourth would wait about 80 ms: fine in a burst, too long for a queue standing a second.
      expect(queue.refusal('c')).toBeNull();
      vi.advanceTimersByTime(1_001);
      expect(queue.refusal('c')).toMatchObject({ reason: 'would-wait-too-long' });
      running.open();
      for (const g of burst) g.open();
      await Promise.all(held);
      expect(queue.refusal('c')).toBeNull();
    } finally {
      vi.useRealTimers();
    }
  });

  it('refuses a waiting transform whose original would pass the bytes held by the queue', async () => {
    const queue = new TransformQueue({
      concurrency: 1,
      maxWaiting: 10,
      maxWaitingBytes: 100,
      maxWaitMs: 1_000,
    });
    const running = gate([], 'running');
    const held = [queue.run('a', 80, running.task)];
    const waiting = gate([], 'b');
    held.push(queue.run('b', 80, waiting.task));
    await expect(queue.run('c', 30, async () => 'c')).rejects.toThrow(/large conversions/);
    running.open();
    waiting.open();
    await Promise.all(held);
  });
});
