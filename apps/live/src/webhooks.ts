import { randomUUID } from 'node:crypto';
import { request as httpRequest, type Agent as HttpAgent } from 'node:http';
import { request as httpsRequest, type Agent as HttpsAgent } from 'node:https';
import { checkLiteralHost } from '@ukiyo/edge';
import { webhookSecret, type Job, type JobQueue } from '@ukiyo/server';
import type { Logger } from 'pino';
import { Webhook } from 'standardwebhooks';
import type { Db, SecretBox } from './types.ts';

export interface WebhookOptions {
  agents: { http: HttpAgent; https: HttpsAgent };
  /** ALLOW_PRIVATE_ORIGINS: the agents check names; addresses written as such are checked here. */
  allowPrivate: boolean;
  timeoutMs: number;
}

interface Answer {
  status: number;
  body: string;
}

/** A queued event: `messageId` is its `webhook-id`, the same on every attempt. */
interface WebhookJob {
  url: string;
  payload: Record<string, unknown>;
  messageId: string;
  organizationId: number;
}

/**
 * Customer webhooks: JSON POSTs through the SSRF-guarded agents (a customer's URL must not
 * reach our own network), with a timeout, signed with the organization's secret by the Standard
 * Webhooks library (`webhook-id`, `webhook-timestamp`, `webhook-signature`). The auth webhook is
 * asked once, while the publisher waits; events are `webhook` jobs, retried with backoff
 * (`RETRY_POLICIES`) by whichever live process works the queue, their id kept across attempts
 * so a receiver can tell a retry from a new event.
 */
export class Webhooks {
  constructor(
    private readonly options: WebhookOptions,
    private readonly deps: { db: Db; secrets: SecretBox; jobs: JobQueue },
    private readonly log: Logger,
  ) {}

  private async post(
    organizationId: number,
    url: string,
    payload: unknown,
    messageId: string,
  ): Promise<Answer> {
    const target = new URL(url);
    // Node connects to an address literal without a lookup, so the agents' guard never sees it.
    checkLiteralHost(target.hostname, this.options.allowPrivate);
    const body = JSON.stringify(payload);
    const secret = await webhookSecret(this.deps.db, this.deps.secrets, organizationId);
    const sentAt = new Date();
    const headers = {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
      'webhook-id': messageId,
      'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
      'webhook-signature': new Webhook(secret).sign(messageId, sentAt, body),
    };
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const agent = target.protocol === 'https:' ? this.options.agents.https : this.options.agents.http;
    return new Promise((resolve, reject) => {
      const req = send(target, { method: 'POST', agent, timeout: this.options.timeoutMs, headers }, (res) => {
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
      });
      req.on('timeout', () => req.destroy(new Error('webhook timed out')));
      req.on('error', reject);
      req.end(body);
    });
  }

  /** The auth webhook: allowed only on a 2xx answer of `{"allowed": true}`. */
  async allowed(organizationId: number, url: string, payload: Record<string, unknown>): Promise<boolean> {
    try {
      const answer = await this.post(organizationId, url, payload, newMessageId());
      if (answer.status < 200 || answer.status >= 300) return false;
      const parsed: unknown = JSON.parse(answer.body);
      return (
        typeof parsed === 'object' && parsed !== null && (parsed as { allowed?: unknown }).allowed === true
      );
    } catch (error) {
      this.log.info({ err: error, organizationId }, 'auth webhook failed: refused');
      return false;
    }
  }

  /**
   * Queues an event for the channel's event webhook (none: nothing to do); with `trx`, inside
   * that transaction, so the event exists exactly when what it reports does.
   */
  async event(
    organizationId: number,
    url: string,
    payload: Record<string, unknown>,
    trx?: Parameters<JobQueue['send']>[2],
  ): Promise<void> {
    if (!url) return;
    await this.deps.jobs.send<WebhookJob>(
      'webhook',
      { url, payload, messageId: newMessageId(), organizationId, target: new URL(url).host },
      trx,
    );
  }

  /** Delivers queued events from this process; resolves to a function that stops it. */
  work(concurrency: number): Promise<() => Promise<void>> {
    return this.deps.jobs.work<WebhookJob>('webhook', concurrency, (job) => this.deliver(job));
  }

  private async deliver({ data }: Job<WebhookJob>): Promise<void> {
    const answer = await this.post(data.organizationId, data.url, data.payload, data.messageId);
    // Any other answer is retried, as Standard Webhooks senders do: a 4xx may be a receiver
    // being deployed; the attempts are bounded, then the event is a dead letter.
    if (answer.status < 200 || answer.status >= 300)
      throw new Error(`the receiver answered ${answer.status}`);
  }
}

function newMessageId(): string {
  return `msg_${randomUUID()}`;
}
