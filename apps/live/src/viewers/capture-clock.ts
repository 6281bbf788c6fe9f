/**
 * How long a least delay is kept: long enough that a packet sent as soon as its frame was made
 * falls within it, short enough to follow a publisher whose clock runs a little fast or slow
 * against ours.
 */
const WINDOW_MS = 10_000;

/**
 * When each RTP timestamp of a stream was captured, on our wall clock: its packets' arrivals less
 * the RTP time elapsed since the first, the least of them (the least-delayed packet) over the
 * last one to two windows. Viewers' sender reports give this, not the time a packet was sent:
 * packets of the ladder's rungs arrive later than the publisher's own of the same instant (its
 * decode and encode), and a receiver that knows when each was captured delays the audio to match
 * (lip sync) rather than playing the rung's pictures behind their sound.
 */
export class CaptureClock {
  private readonly ticksPerMs: number;
  /** The latest timestamp seen, and its ticks since the first (signed steps: through the wrap). */
  private latest: number | undefined;
  private ticks = 0;
  /** Wall clock of tick 0 as the least-delayed packet of this window and the one before place it. */
  private zero = Infinity;
  private previousZero = Infinity;
  private windowEnd = -Infinity;

  constructor(clockRate: number) {
    this.ticksPerMs = clockRate / 1000;
  }

  /** A packet of `timestamp` arrived at `now` (wall clock, ms). */
  observe(timestamp: number, now: number): void {
    if (this.latest !== undefined) this.ticks += (timestamp - this.latest) | 0;
    this.latest = timestamp;
    if (now >= this.windowEnd) {
      this.previousZero = this.zero;
      this.zero = Infinity;
      this.windowEnd = now + WINDOW_MS;
    }
    this.zero = Math.min(this.zero, now - this.ticks / this.ticksPerMs);
  }

  /** The stream's RTP timestamp at wall clock `at` (ms); undefined before any packet. */
  timestampAt(at: number): number | undefined {
    if (this.latest === undefined) return undefined;
    const zero = Math.min(this.zero, this.previousZero);
    return (this.latest + Math.round((at - zero) * this.ticksPerMs) - this.ticks) >>> 0;
  }
}
