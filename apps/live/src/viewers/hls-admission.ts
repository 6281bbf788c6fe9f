import { WaitingCounts } from '../hls/waiting-counts.ts';
import type { LoadGuard } from './load-guard.ts';
import { toShed, type Audience } from './shedding.ts';

const SWEEP_MS = 1_000;
/**
 * New clients whose request waits for room at once: a crowd this large arriving together waits
 * its turn (a socket and a pending answer each), past it a newcomer is refused at once.
 */
const MAX_WAITING = 4_000;
/**
 * Requests of one client waiting for room at once: a player asks for one playlist at a time, and
 * one client must not take the places of the rest of a crowd.
 */
const MAX_WAITING_PER_CLIENT = 8;

interface Waiter {
  audience: Audience;
  client: string;
  resolve: (admitted: boolean) => void;
  timer: NodeJS.Timeout;
}

/**
 * Which HLS clients the main thread serves. That thread answers every HLS request of the live
 * process beside the publishers' ingest, and past what it can do every viewer's reloads and parts
 * come late together: on a 2-core machine, 500 LL-HLS clients all received their parts, 1,000 at
 * once none received 90 % of them, and 2,000 almost nothing.
 *
 * So a client (address and user agent) of a channel is admitted by the thread's LoadGuard when
 * first seen, then served until it has been quiet for `quietMs`. A crowd joining at once is let
 * in as fast as the guard finds room, a window at a time: a newcomer's request waits its turn, in
 * the order they came, for up to `waitMs`, and only then is answered 503 with Retry-After. Players
 * give up on a refused first playlist quickly (hls.js retries it once, a second later), so a
 * crowd arriving for a broadcast's start is answered late rather than turned away. While the
 * thread starves the guard sheds clients of the tenant and channel with the most, newest first
 * (toShed): their next request asks again.
 */
export class HlsAdmission {
  /**
   * Admitted clients (`{channel}\n{client}`), ordered by their last request, with their audience
   * and the order they were admitted in.
   */
  private readonly clients = new Map<string, { lastAt: number; admission: number; audience: Audience }>();
  private admissions = 0;
  /** New clients' requests waiting for room, in the order they came. */
  private readonly waiting = new Set<Waiter>();
  private readonly waitingPerClient = new WaitingCounts(MAX_WAITING_PER_CLIENT);
  /**
   * Forgets the quiet without waiting for a request: the guard estimates what a client costs from
   * how many it holds, and viewers of an ended broadcast would make that seem nothing.
   */
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly guard: Pick<LoadGuard, 'admit' | 'left' | 'whenStarving' | 'whenWindowCloses' | 'close'>,
    private readonly quietMs: number,
    private readonly waitMs: number,
    private readonly onShed: (count: number) => void,
  ) {
    guard.whenStarving((count) => this.shed(count));
    guard.whenWindowCloses(() => this.letWaitingIn(Date.now()));
    this.sweeper = setInterval(() => this.forgetQuiet(Date.now()), SWEEP_MS);
    this.sweeper.unref();
  }

  /** New clients whose request waits for room now. */
  get waitingCount(): number {
    return this.waiting.size;
  }

  /**
   * Whether a request of `viewer` (address and user agent) of the audience's channel may be
   * served: a client admitted before, or one let in now or within `waitMs`.
   */
  admit(audience: Audience, viewer: string, now = Date.now()): Promise<boolean> {
    const client = `${audience.channelId}\n${viewer}`;
    this.forgetQuiet(now);
    // Newcomers queue behind those already waiting.
    if (this.touch(client, now) || (this.waiting.size === 0 && this.take(audience, client, now)))
      return Promise.resolve(true);
    if (this.waiting.size >= MAX_WAITING || !this.waitingPerClient.take(client))
      return Promise.resolve(false);
    return new Promise((resolve) => {
      const waiter: Waiter = {
        audience,
        client,
        resolve,
        timer: setTimeout(() => this.stopWaiting(waiter, false), this.waitMs),
      };
      this.waiting.add(waiter);
    });
  }

  close(): void {
    clearInterval(this.sweeper);
    this.guard.close();
    for (const waiter of this.waiting) this.stopWaiting(waiter, false);
  }

  /** Answers a waiting request, admitted or not. */
  private stopWaiting(waiter: Waiter, admitted: boolean): void {
    this.waiting.delete(waiter);
    this.waitingPerClient.release(waiter.client);
    clearTimeout(waiter.timer);
    waiter.resolve(admitted);
  }

  /** Marks an admitted client's request (false when it is not admitted). */
  private touch(client: string, now: number): boolean {
    const known = this.clients.get(client);
    if (!known) return false;
    // Re-inserted so the map stays ordered by last request: forgetting stops at the first recent one.
    this.clients.delete(client);
    known.lastAt = now;
    this.clients.set(client, known);
    return true;
  }

  /** Admits a new client when the guard has room. */
  private take(audience: Audience, client: string, now: number): boolean {
    if (!this.guard.admit()) return false;
    this.clients.set(client, { lastAt: now, admission: this.admissions++, audience });
    return true;
  }

  /** After each of the guard's windows: the waiting, oldest first, while it has room. */
  private letWaitingIn(now: number): void {
    this.forgetQuiet(now);
    for (const waiter of this.waiting) {
      // A client with two requests waiting is admitted by the first.
      if (!this.touch(waiter.client, now) && !this.take(waiter.audience, waiter.client, now)) return;
      this.stopWaiting(waiter, true);
    }
  }

  private forgetQuiet(now: number): void {
    for (const [client, { lastAt }] of this.clients) {
      if (now - lastAt <= this.quietMs) break;
      this.clients.delete(client);
      this.guard.left();
    }
  }

  private shed(count: number): void {
    const shed = toShed(
      this.clients,
      count,
      ([, { audience }]) => audience,
      ([, { admission }]) => admission,
    );
    for (const [client] of shed) {
      this.clients.delete(client);
      this.guard.left();
    }
    this.onShed(shed.length);
  }
}
