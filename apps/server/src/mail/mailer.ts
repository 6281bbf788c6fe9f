import { MESSAGES, type MessageKey } from '@ukiyo/contract';
import { sql } from 'kysely';
import nodemailer, { type Transporter } from 'nodemailer';
import type { Logger } from 'pino';
import { tokenDigest } from '../crypto/tokens.ts';
import type { Db } from '../db/database.ts';
import type { JobQueue } from '../jobs/queue.ts';

/** A `mail` job: the outbox row to send. */
interface MailJob {
  mailId: number;
}

export interface Mail {
  to: string;
  subject: string;
  text: string;
  /** The single-use token in the text's link (activation, password reset), masked once it is of no use. */
  secret?: string;
}

/** Where a link's token stood: the same length as the API tokens' mask. */
const MASK = '*'.repeat(12);

/** A mail's row once its link no longer opens anything: the masked body, nothing to find it by. */
const LINK_MASKED = {
  body: sql<string>`coalesce(redacted_body, body)`,
  redacted_body: null,
  link_token_hash: null,
};

function fill(template: string, values: Record<string, string | number>): string {
  return template.replace(/\{\{(\w+)\}\}/g, (_, name: string) => String(values[name] ?? ''));
}

/** A mail from the catalogue in both languages, Japanese first. */
export function catalogueMail(
  to: string,
  subject: MessageKey,
  body: MessageKey,
  values: Record<string, string | number>,
): Mail {
  return {
    to,
    subject: `${MESSAGES[subject].ja} / ${MESSAGES[subject].en}`,
    text: `${fill(MESSAGES[body].ja, values)}\n\n----\n\n${fill(MESSAGES[body].en, values)}\n`,
  };
}

/**
 * Every mail is written to the outbox table first (administrators read it in the console when
 * no SMTP_URL is set); with SMTP_URL a `mail` job is queued with it, in the same transaction,
 * and a worker (`work`, in the console's processes) sends it, marks it sent and masks its link's
 * token, or records the error and leaves it to the queue's retries.
 */
export class Mailer {
  private readonly transport: Transporter | undefined;
  private readonly from: string;

  constructor(
    private readonly db: Db,
    private readonly jobs: JobQueue,
    options: { smtpUrl?: string; from: string },
    private readonly log: Logger,
  ) {
    this.from = options.from;
    this.transport = options.smtpUrl ? nodemailer.createTransport(options.smtpUrl) : undefined;
  }

  async send(mail: Mail): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const row = await trx
        .insertInto('mail_outbox')
        .values({
          recipient: mail.to,
          subject: mail.subject,
          body: mail.text,
          link_token_hash: mail.secret ? tokenDigest(mail.secret) : null,
          redacted_body: mail.secret ? mail.text.replaceAll(mail.secret, MASK) : null,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      if (this.transport) {
        const domain = mail.to.slice(mail.to.lastIndexOf('@') + 1);
        await this.jobs.send<MailJob>('mail', { mailId: row.id, target: domain }, trx);
      }
    });
  }

  /** Sends queued mail from this process; without SMTP_URL there is nothing to send. */
  async work(): Promise<() => Promise<void>> {
    const transport = this.transport;
    if (!transport) return async () => {};
    return this.jobs.work<MailJob>('mail', 1, (job) => this.deliver(transport, job.data.mailId));
  }

  private async deliver(transport: Transporter, mailId: number): Promise<void> {
    const mail = await this.db
      .selectFrom('mail_outbox')
      .select(['recipient', 'subject', 'body', 'sent_at'])
      .where('id', '=', mailId)
      .executeTakeFirst();
    // Sent by an attempt whose process died before it could say so: not twice.
    if (!mail || mail.sent_at) return;
    try {
      await transport.sendMail({
        from: this.from,
        to: mail.recipient,
        subject: mail.subject,
        text: mail.body,
      });
    } catch (error) {
      this.log.warn({ err: error, mailId }, 'mail delivery failed');
      await this.db
        .updateTable('mail_outbox')
        .set({ error: String(error).slice(0, 500) })
        .where('id', '=', mailId)
        .execute();
      throw error;
    }
    await this.db
      .updateTable('mail_outbox')
      .set({ sent_at: new Date(), error: null, ...LINK_MASKED })
      .where('id', '=', mailId)
      .execute();
  }
}

/**
 * The newest mails of the outbox, for administrators. Without SMTP the outbox is the delivery,
 * so a link stays readable while its token still works; links whose activation or reset token
 * was used, replaced or has expired are masked first.
 */
export async function readOutbox(db: Db, limit: number) {
  await db
    .updateTable('mail_outbox')
    .set(LINK_MASKED)
    .where('link_token_hash', 'is not', null)
    .where(({ exists, not, selectFrom, ref }) =>
      not(
        exists(
          selectFrom('users')
            .select('id')
            .whereRef('activation_token_hash', '=', ref('mail_outbox.link_token_hash'))
            .where('activated_at', 'is', null)
            .where('activation_expires_at', '>', sql<Date>`now()`)
            .union(
              selectFrom('password_resets')
                .select('user_id as id')
                .whereRef('token_hash', '=', ref('mail_outbox.link_token_hash'))
                .where('used_at', 'is', null)
                .where('expires_at', '>', sql<Date>`now()`),
            ),
        ),
      ),
    )
    .execute();
  return db.selectFrom('mail_outbox').selectAll().orderBy('id', 'desc').limit(limit).execute();
}
