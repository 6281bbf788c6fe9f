import { z } from 'zod';

/** How often a process tells the holders of the channels it served whom it served them to. */
export const REPORT_MS = 2_000;
/** Clients reported per channel and report: beyond, they go uncounted (a report stays under 8 MiB). */
export const MAX_REPORTED = 20_000;

/** A report's body, as the holder checks it. */
export const viewersReportSchema = z.object({
  channelId: z.string().regex(/^[0-9a-f]{1,64}$/),
  clients: z.array(z.string().max(256)).max(MAX_REPORTED),
});
export type ViewersReport = z.infer<typeof viewersReportSchema>;

/**
 * The viewers this process served other processes' channels to (hls.ts answers them from the
 * holder's answers, kept). A channel's distinct viewers are counted where it is held, with its
 * own viewers, so that a viewer is one viewer whichever process it asks; every REPORT_MS each
 * holder gets the clients seen since the last report, and once more when this process stops.
 */
export class PeerViewers {
  private readonly pending = new Map<string, { peer: string; clients: Set<string> }>();
  private readonly timer: NodeJS.Timeout;

  /** `send` delivers one report; it settles (never rejects) once the holder took it or failed to. */
  constructor(private readonly send: (peer: string, report: ViewersReport) => Promise<void>) {
    this.timer = setInterval(() => void this.report(), REPORT_MS);
    this.timer.unref();
  }

  seen(peer: string, channelId: string, client: string): void {
    let channel = this.pending.get(channelId);
    if (!channel) {
      channel = { peer, clients: new Set() };
      this.pending.set(channelId, channel);
    }
    if (channel.clients.size < MAX_REPORTED) channel.clients.add(client);
  }

  /** Stops reporting, once the clients seen since the last report have been sent. */
  close(): Promise<void> {
    clearInterval(this.timer);
    return this.report();
  }

  private async report(): Promise<void> {
    const taken = [...this.pending];
    this.pending.clear();
    await Promise.all(
      taken.map(([channelId, { peer, clients }]) => this.send(peer, { channelId, clients: [...clients] })),
    );
  }
}
