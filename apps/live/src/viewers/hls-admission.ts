import type { LoadGuard } from './load-guard.ts';

const SWEEP_MS = 1_000;

/**
 * Which HLS clients the main thread serves. That thread answers every HLS request of the live
 * process beside the publishers' ingest, and past what it can do every viewer's reloads and parts
 * come late together: on a 2-core machine, 500 LL-HLS clients all received their parts, 1,000 at
 * once none received 90 % of them, and 2,000 almost nothing.
 *
 * So a client (address and user agent) of a channel is admitted by the thread's LoadGuard when
 * first seen, then served until it has been quiet for `quietMs`; one the guard refuses is
 * answered 503 with Retry-After, and may ask again. A crowd joining at once is let in as fast as
 * the guard finds room, and while the thread starves the guard sheds the newest admitted first:
 * their next request asks again. Those who watched longest keep their stream.
 */
export class HlsAdmission {
  /** Admitted clients, ordered by their last request, with the order they were admitted in. */
  private readonly clients = new Map<string, { lastAt: number; admission: number }>();
  private admissions = 0;
  /**
   * Forgets the quiet without waiting for a request: the guard estimates what a client costs from
   * how many it holds, and viewers of an ended broadcast would make that seem nothing.
   */
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly guard: Pick<LoadGuard, 'admit' | 'left' | 'whenStarving' | 'close'>,
    private readonly quietMs: number,
    private readonly onShed: (count: number) => void,
  ) {
    guard.whenStarving((count) => this.shed(count));
    this.sweeper = setInterval(() => this.forgetQuiet(Date.now()), SWEEP_MS);
    this.sweeper.unref();
  }

  /** Whether a request of `client` may be served: a client admitted before, or one let in now. */
  admit(client: string, now = Date.now()): boolean {
    this.forgetQuiet(now);
    const known = this.clients.get(client);
    if (known) {
      // Re-inserted so the map stays ordered by last request: forgetting stops at the first recent one.
      this.clients.delete(client);
      known.lastAt = now;
      this.clients.set(client, known);
      return true;
    }
    if (!this.guard.admit()) return false;
    this.clients.set(client, { lastAt: now, admission: this.admissions++ });
    return true;
  }

  close(): void {
    clearInterval(this.sweeper);
    this.guard.close();
  }

  private forgetQuiet(now: number): void {
    for (const [client, { lastAt }] of this.clients) {
      if (now - lastAt <= this.quietMs) break;
      this.clients.delete(client);
      this.guard.left();
    }
  }

  private shed(count: number): void {
    const newest = [...this.clients].sort(([, a], [, b]) => b.admission - a.admission).slice(0, count);
    for (const [client] of newest) {
      this.clients.delete(client);
      this.guard.left();
    }
    this.onShed(newest.length);
  }
}
