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
    let sweep: NodeJS.Timeout | undefined;
    let deadline: NodeJS.Timeout | undefined;
    server.close(() => {
      clearInterval(sweep);
      clearTimeout(deadline);
      resolve();
    });
    if (graceMs <= 0) {
      server.closeAllConnections();
      return;
    }
    server.closeIdleConnections();
    // A keep-alive connection becomes idle when its last answer is written.
    sweep = setInterval(() => server.closeIdleConnections(), 100);
    deadline = setTimeout(() => server.closeAllConnections(), graceMs);
    sweep.unref();
    deadline.unref();
  });
}
