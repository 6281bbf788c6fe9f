import { getPriority } from 'node:os';
import { readdirSync, readFileSync } from 'node:fs';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { WorkerPriority } from './worker-priority.ts';

const isLinux = process.platform === 'linux';

describe('WorkerPriority', () => {
  it.runIf(isLinux)("lowers libvips' worker threads and leaves the event loop's alone", async () => {
    const own = getPriority();
    const image = sharp({ create: { width: 2000, height: 1500, channels: 3, background: '#345' } });
    const running = image.blur(30).png().toBuffer();
    const priority = new WorkerPriority();
    let lowered = 0;
    for (let attempt = 0; attempt < 50 && lowered === 0; attempt++) {
      lowered += priority.lower();
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await running;
    expect(lowered).toBeGreaterThan(0);
    // libvips may start more workers after the first look found some, as the service's periodic
    // looks would see: one more look takes them.
    priority.lower();
    const workers = readdirSync('/proc/self/task').filter(
      (tid) => readFileSync(`/proc/self/task/${tid}/comm`, 'latin1').trim() === 'libvips worker',
    );
    for (const tid of workers) expect(getPriority(Number(tid))).toBe(own + 10);
    expect(getPriority()).toBe(own);
    // Done once: the same threads are not lowered again.
    expect(priority.lower()).toBe(0);
  });

  it('does nothing where threads cannot be listed', () => {
    expect(new WorkerPriority('/nonexistent').lower()).toBe(0);
  });
});
