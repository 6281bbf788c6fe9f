import type { Server } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import type { Server as NetServer } from 'node:net';

/**
 * Stops accepting connections and lets requests in flight finish: idle keep-alive connections
 * are closed as they become idle, and whatever is still open after `graceMs` is cut.
 * `graceMs` 0 cuts at once (tests). `feeders` are listeners that hand their connections to
 * `server` (the edge's TLS port): they stop accepting too, and the drain ends when their
 * connections have closed as well.
 */
export function drainServer(
  server: Server | HttpsServer,
  graceMs: number,
  feeders: NetServer[] = [],
): Promise<void> {
  const closed = (listening: NetServer) =>
    new Promise<void>((resolve) => (listening.listening ? listening.close(() => resolve()) : resolve()));
  const timers: NodeJS.Timeout[] = [];
  const done = Promise.all([server, ...feeders].map(closed)).then(() => {
    for (const timer of timers) clearTimeout(timer);
  });
  if (graceMs <= 0) {
    server.closeAllConnections();
    return done;
  }
  server.closeIdleConnections();
  timers.push(
    // A keep-alive connection becomes idle when its last answer is written.
    setInterval(() => server.closeIdleConnections(), 100).unref(),
    setTimeout(() => server.closeAllConnections(), graceMs).unref(),
  );
  return done;
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
