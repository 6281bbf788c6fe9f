import { MESSAGES, type MessageKey } from '@ukiyo/contract';
import nodemailer, { type Transporter } from 'nodemailer';
import type { Logger } from 'pino';
import type { Db } from '../db/database.ts';

export interface Mail {
  to: string;
  subject: string;
  text: string;
}

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
 * no SMTP_URL is set); with SMTP_URL it is then sent and marked sent, or its error recorded.
 */
export class Mailer {
  private readonly transport: Transporter | undefined;
  private readonly from: string;

  constructor(
    private readonly db: Db,
    options: { smtpUrl?: string; from: string },
    private readonly log: Logger,
  ) {
    this.from = options.from;
    this.transport = options.smtpUrl ? nodemailer.createTransport(options.smtpUrl) : undefined;
  }

  async send(mail: Mail): Promise<void> {
    const row = await this.db
      .insertInto('mail_outbox')
      .values({ recipient: mail.to, subject: mail.subject, body: mail.text })
      .returning('id')
      .executeTakeFirstOrThrow();
    if (!this.transport) return;
    try {
      await this.transport.sendMail({ from: this.from, to: mail.to, subject: mail.subject, text: mail.text });
      await this.db
        .updateTable('mail_outbox')
        .set({ sent_at: new Date() })
        .where('id', '=', row.id)
        .execute();
    } catch (error) {
      this.log.warn({ err: error, mailId: row.id }, 'mail delivery failed');
      await this.db
        .updateTable('mail_outbox')
        .set({ error: String(error).slice(0, 500) })
        .where('id', '=', row.id)
        .execute();
      throw error;
    }
  }
}
