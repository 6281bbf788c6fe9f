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
