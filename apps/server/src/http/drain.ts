import type { Server } from 'node:http';
import type { Server as HttpsServer } from 'node:https';

/**
 * Stops accepting connections and lets requests in flight finish: idle keep-alive connections
 * are closed as they become idle, and whatever is still open after `graceMs` is cut.
 * `graceMs` 0 cuts at once (tests).
 */
export function drainServer(server: Server | HttpsServer, graceMs: number): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) return resolve();
    const timers: NodeJS.Timeout[] = [];
    server.close(() => {
      for (const timer of timers) clearTimeout(timer);
      resolve();
    });
    if (graceMs <= 0) {
      server.closeAllConnections();
      return;
    }
    server.closeIdleConnections();
    timers.push(
      // A keep-alive connection becomes idle when its last answer is written.
      setInterval(() => server.closeIdleConnections(), 100).unref(),
      setTimeout(() => server.closeAllConnections(), graceMs).unref(),
    );
  });
}

/**
 * Counts a fetch handler's calls that have not returned. A client that goes away early closes
 * its connection (so drainServer is done) while its handler still runs and may still query the
 * database: shutdown waits for `settled` before closing what handlers use.
 */
export function countedHandler<Args extends unknown[]>(
  handler: (...args: Args) => Response | Promise<Response>,
): { handler: (...args: Args) => Promise<Response>; settled(timeoutMs: number): Promise<void> } {
  let running = 0;
  let idle: (() => void)[] = [];
  return {
    handler: async (...args) => {
      running++;
      try {
        return await handler(...args);
      } finally {
        if (--running === 0) for (const resolve of idle.splice(0)) resolve();
      }
    },
    settled: (timeoutMs) =>
      running === 0
        ? Promise.resolve()
        : new Promise((resolve) => {
            const timer = setTimeout(() => {
              idle = idle.filter((waiting) => waiting !== done);
              resolve();
            }, timeoutMs);
            timer.unref();
            const done = () => {
              clearTimeout(timer);
              resolve();
            };
            idle.push(done);
          }),
  };
}
