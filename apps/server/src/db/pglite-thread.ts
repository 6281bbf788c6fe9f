import { once } from 'node:events';
import { Worker } from 'node:worker_threads';

export interface PGliteResult {
  rows: unknown[];
  affectedRows?: number;
}

type Reply = { id: number } & (
  | { rows: unknown[]; affectedRows?: number; error?: undefined }
  | { error: { message: string } & Record<string, unknown> }
);

/**
 * Embedded PGlite on a thread of its own (`pglite-worker.mjs`). PGlite is PostgreSQL compiled to
 * WebAssembly and runs every statement synchronously on the thread that calls it: on the thread
 * that also answers the edge's cache hits, one tenant looping origin.add held every tenant's
 * hits up (bench/tenant-isolation.ts). Here that thread only posts SQL and takes the rows back
 * (structured clone keeps Date, Uint8Array and parsed JSON as PGlite returned them). The PGlite
 * module (~40 MB of memory) is loaded by the worker alone: processes on PostgreSQL never load it.
 */
export class PGliteThread {
  private readonly worker: Worker;
  private readonly pending = new Map<
    number,
    { resolve(result: PGliteResult): void; reject(error: Error): void }
  >();
  private nextId = 0;
  /** Set once closed or crashed: every query after that fails with it rather than waiting. */
  private failure: Error | undefined;

  constructor(directory: string, settings: string[]) {
    this.worker = new Worker(new URL('./pglite-worker.mjs', import.meta.url), {
      workerData: { directory, settings },
    });
    // Idle, the thread must not keep the process alive (a test that never closes it, a script
    // that is done); it is held only while a query waits for its answer.
    this.worker.unref();
    this.worker.on('message', (reply: Reply) => this.settle(reply));
    this.worker.on('error', (error) => this.fail(error));
    this.worker.on('exit', (code) =>
      this.fail(new Error(`the embedded database's thread stopped (exit code ${code})`)),
    );
  }

  query(sql: string, params: readonly unknown[]): Promise<PGliteResult> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    const answered = new Promise<PGliteResult>((resolve, reject) =>
      this.pending.set(id, { resolve, reject }),
    );
    if (this.pending.size === 1) this.worker.ref();
    this.worker.postMessage({ id, sql, params });
    return answered;
  }

  /** Waits for the queries already sent, flushes the database to disk and ends the thread. */
  async close(): Promise<void> {
    if (this.failure) return;
    this.failure = new Error('the embedded database is closed');
    this.worker.ref();
    // Rejects with the thread's error if closing fails.
    const exited = once(this.worker, 'exit');
    this.worker.postMessage({ close: true });
    await exited;
  }

  private settle(reply: Reply): void {
    const waiting = this.pending.get(reply.id);
    if (!waiting) return;
    this.pending.delete(reply.id);
    // Once closing, the thread stays held until it has flushed and exited.
    if (this.pending.size === 0 && !this.failure) this.worker.unref();
    if (reply.error) {
      const { message, ...fields } = reply.error;
      waiting.reject(Object.assign(new Error(message), fields));
    } else {
      waiting.resolve(reply);
    }
  }

  private fail(error: Error): void {
    this.failure ??= error;
    for (const waiting of this.pending.values()) waiting.reject(this.failure);
    this.pending.clear();
  }
}
