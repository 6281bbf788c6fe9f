import { RtpTimeCallback, type RtpTimeInput, type RtpTimeOutput } from 'werift/nonstandard';

/**
 * A track's RTP timestamps as milliseconds since its first packet, for the WebM writer that
 * feeds the ladder's ffmpeg. werift's RtpTimeCallback adds each step between packets truncated to
 * a whole millisecond: 33 ms for every 33.3 ms frame of 30 fps video (16 for 16.7 at 60 fps), so
 * the ladder's video ran 1 % (4 %) slow against its audio and real time: the two 0.6 s apart
 * after a minute, and each segment later than the one before. Here the clock's ticks are summed,
 * and converted once per packet.
 */
export class RtpElapsedCallback extends RtpTimeCallback {
  private ticks = 0;
  private first: number | undefined;
  private previous: number | undefined;

  // A property, as werift's processor mixin declares it.
  override processInput = ({ rtp, eol }: RtpTimeInput): RtpTimeOutput[] => {
    if (eol) return [{ eol: true }];
    if (!rtp) return [];
    const { timestamp } = rtp.header;
    // The signed 32-bit step: through the wrap, and backwards for a packet behind the last.
    if (this.previous !== undefined) this.ticks += (timestamp - this.previous) | 0;
    this.first ??= timestamp;
    this.previous = timestamp;
    return [{ rtp, time: Math.round((this.ticks * 1000) / this.clockRate) }];
  };

  /** The RTP timestamp of the time this callback gave (`ms` since the first packet). */
  timestampAt(ms: number): number {
    if (this.first === undefined) throw new Error('timestampAt() before the first packet');
    return (this.first + Math.round((ms * this.clockRate) / 1000)) >>> 0;
  }
}
