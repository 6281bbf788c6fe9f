/**
 * Whether a publisher has gone quiet: no media for `timeoutMs`, asked every `everyMs`.
 *
 * A check that comes late says nothing, once: the thread (or the whole process) was held (a long
 * collection, a paused VM, SIGSTOP), and Node runs the overdue timers before it reads the
 * sockets where the publisher's media waited meanwhile, so judged then a publisher that never
 * stopped would seem quiet for as long as the hold. The next check, after those reads, decides.
 * Only one in a row is passed over: a thread so busy that every check is late still ends a
 * publisher that has gone.
 */
export class MediaWatch {
  private lastMediaAt: number;
  private checkedAt: number;
  private passedOver = false;

  constructor(
    private readonly timeoutMs: number,
    private readonly everyMs: number,
    now: number,
  ) {
    this.lastMediaAt = this.checkedAt = now;
  }

  received(now: number): void {
    this.lastMediaAt = now;
  }

  /** The check, run every `everyMs`: true when the publisher has sent nothing for `timeoutMs`. */
  quiet(now: number): boolean {
    const late = now - this.checkedAt > 2 * this.everyMs;
    this.checkedAt = now;
    this.passedOver = late && !this.passedOver;
    return !this.passedOver && now - this.lastMediaAt > this.timeoutMs;
  }
}
