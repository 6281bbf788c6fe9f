import { checkLiteralHost } from '@ukiyo/edge';
import { request as httpRequest, type Agent as HttpAgent } from 'node:http';
import { request as httpsRequest, type Agent as HttpsAgent } from 'node:https';
import type { Logger } from 'pino';

export interface WebhookOptions {
  agents: { http: HttpAgent; https: HttpsAgent };
  /** ALLOW_PRIVATE_ORIGINS: the agents check names; addresses written as such are checked here. */
  allowPrivate: boolean;
  timeoutMs: number;
  /** Delivery attempts of an event (the auth webhook is asked once). */
  attempts: number;
  /** First retry delay; it doubles each time. */
  backoffMs: number;
}

interface Answer {
  status: number;
  body: string;
}

/**
 * Customer webhooks: JSON POSTs through the SSRF-guarded agents (a customer's URL must not
 * reach our own network), with a timeout, and bounded retries for events.
 */
export class Webhooks {
  private readonly pending = new Set<Promise<void>>();

  constructor(
    private readonly options: WebhookOptions,
    private readonly log: Logger,
  ) {}

  private async post(url: string, payload: unknown): Promise<Answer> {
    const target = new URL(url);
    // Node connects to an address literal without a lookup, so the agents' guard never sees it.
    checkLiteralHost(target.hostname, this.options.allowPrivate);
    const body = JSON.stringify(payload);
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const agent = target.protocol === 'https:' ? this.options.agents.https : this.options.agents.http;
    return new Promise((resolve, reject) => {
      const req = send(
        target,
        {
          method: 'POST',
          agent,
          timeout: this.options.timeoutMs,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (chunk: Buffer) => {
            size += chunk.length;
            // Only a small JSON answer matters; a huge one is not read to the end.
            if (size <= 64 * 1024) chunks.push(chunk);
            else res.destroy(new Error('webhook answer larger than 64 KiB'));
          });
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
          );
          res.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(new Error('webhook timed out')));
      req.on('error', reject);
      req.end(body);
    });
  }

  /** The auth webhook: allowed only on a 2xx answer of `{"allowed": true}`. */
  async allowed(url: string, payload: Record<string, unknown>): Promise<boolean> {
    try {
      const answer = await this.post(url, payload);
      if (answer.status < 200 || answer.status >= 300) return false;
      const parsed: unknown = JSON.parse(answer.body);
      return (
        typeof parsed === 'object' && parsed !== null && (parsed as { allowed?: unknown }).allowed === true
      );
    } catch (error) {
      this.log.info({ err: error, url }, 'auth webhook failed: refused');
      return false;
    }
  }

  /** Sends an event in the background, retrying failures; `drain` waits for what is in flight. */
  event(url: string, payload: Record<string, unknown>): void {
    if (!url) return;
    const delivery = this.deliver(url, payload).finally(() => this.pending.delete(delivery));
    this.pending.add(delivery);
  }

  private async deliver(url: string, payload: Record<string, unknown>): Promise<void> {
    for (let attempt = 1; attempt <= this.options.attempts; attempt++) {
      try {
        const answer = await this.post(url, payload);
        if (answer.status >= 200 && answer.status < 300) return;
        // A 4xx other than throttling will not change on retry.
        if (answer.status >= 400 && answer.status < 500 && answer.status !== 429) break;
      } catch (error) {
        this.log.debug({ err: error, url }, 'event webhook attempt failed');
      }
      if (attempt < this.options.attempts) {
        await new Promise((resolve) => setTimeout(resolve, this.options.backoffMs * 2 ** (attempt - 1)));
      }
    }
    this.log.warn({ url, type: payload.type }, 'event webhook not delivered');
  }

  async drain(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }
}
