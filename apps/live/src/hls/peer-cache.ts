import type { Answer } from './answers.ts';

interface Kept {
  answer: Answer;
  /** When it stops being fresh (epoch ms). */
  until: number;
}

/** The seconds a peer's answer may be kept, from its `cache-control` (none without max-age). */
function maxAgeSeconds(answer: Answer): number {
  const control = answer.headers['cache-control'] ?? '';
  if (/no-store|no-cache|private/.test(control)) return 0;
  return Number(/max-age=([0-9]{1,9})/.exec(control)?.[1] ?? 0);
}

/**
 * What a live process keeps of the answers of the peer holding a channel, as a shared cache in
 * front of it would: a 200 is kept while its Cache-Control's max-age says (a part or segment
 * never changes under its name, a blocking reload's URL names one version of a playlist, a plain
 * playlist is kept a second), within `maxBytes`, the least recently used going first. Requests
 * for an answer being fetched wait for that fetch rather than making their own: a crowd of
 * players asking this process for the next part or blocking reload together costs the holder
 * one request. So viewers spread over several processes cost the holder's thread a request per
 * file per process, not per viewer.
 */
export class PeerCache {
  private readonly kept = new Map<string, Kept>();
  private readonly fetching = new Map<string, Promise<Answer>>();
  private bytes = 0;

  constructor(
    private readonly maxBytes: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** The answer for `key` (the request's path and query): kept, being fetched, or fetched now. */
  get(key: string, fetchAnswer: () => Promise<Answer>): Promise<Answer> {
    const kept = this.kept.get(key);
    if (kept) {
      this.kept.delete(key);
      if (kept.until > this.now()) {
        this.kept.set(key, kept);
        return Promise.resolve(kept.answer);
      }
      this.bytes -= kept.answer.body.length;
    }
    const pending = this.fetching.get(key);
    if (pending) return pending;
    const fetched = fetchAnswer().then(
      (answer) => {
        this.fetching.delete(key);
        this.keep(key, answer);
        return answer;
      },
      (error: unknown) => {
        this.fetching.delete(key);
        throw error;
      },
    );
    this.fetching.set(key, fetched);
    return fetched;
  }

  /** Bytes of the answers kept. */
  get size(): number {
    return this.bytes;
  }

  private keep(key: string, answer: Answer): void {
    const seconds = maxAgeSeconds(answer);
    if (answer.status !== 200 || seconds === 0 || answer.body.length > this.maxBytes) return;
    this.kept.set(key, { answer, until: this.now() + seconds * 1000 });
    this.bytes += answer.body.length;
    for (const [oldest, { answer: old }] of this.kept) {
      if (this.bytes <= this.maxBytes) break;
      this.kept.delete(oldest);
      this.bytes -= old.body.length;
    }
  }
}
