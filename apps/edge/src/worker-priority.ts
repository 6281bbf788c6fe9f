import { readdirSync, readFileSync } from 'node:fs';
import { setPriority } from 'node:os';

/** How much less CPU libvips' threads get than the event loop, in nice steps (0..19). */
const WORKER_NICENESS = 10;

/**
 * libvips' worker threads do the pixel work of every transform. At the event loop's priority,
 * four of them on two cores keep the event loop off the CPU for tens of milliseconds at a time,
 * and every cache hit and health probe with it. Made nicer, they get what the event loop leaves
 * and transforms take the CPU only when nothing else wants it. Linux only (other systems keep
 * one priority for the process); raising niceness needs no privilege.
 */
export class WorkerPriority {
  /** Threads lowered and still alive at the last look. */
  private lowered = new Set<string>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly tasksDir = '/proc/self/task') {}

  /** Checks for new worker threads every `intervalMs` while `busy()` says transforms run. */
  start(busy: () => boolean, intervalMs = 500): void {
    this.timer = setInterval(() => {
      if (busy()) this.lower();
    }, intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Lowers every libvips worker thread not lowered yet; returns how many it lowered. */
  lower(): number {
    let tasks: string[];
    try {
      tasks = readdirSync(this.tasksDir);
    } catch {
      return 0;
    }
    const lowered = new Set<string>();
    let count = 0;
    for (const tid of tasks) {
      if (this.lowered.has(tid)) {
        lowered.add(tid);
        continue;
      }
      try {
        if (readFileSync(`${this.tasksDir}/${tid}/comm`, 'latin1').trim() !== 'libvips worker') continue;
        // On Linux a thread id names that one thread.
        setPriority(Number(tid), WORKER_NICENESS);
        lowered.add(tid);
        count++;
      } catch {
        // The thread ended meanwhile.
      }
    }
    this.lowered = lowered;
    return count;
  }
}
