import type { RateRule } from '../auth/rate-limits.ts';
import { catalogueMail } from '../mail/mailer.ts';
import { authOf, organizationOf, type Handlers } from './context.ts';

/** Contact form submissions per user: a person writes a few, a script many. */
export const HELP_PER_USER: RateRule = { points: 5, seconds: 3600 };

export const helpHandlers: Handlers = {
  'user.mail': async (input, context) => {
    const { db, limits, mailer, config } = context.deps;
    const auth = authOf(context);
    const organization = organizationOf(context);
    await limits.spend('help', HELP_PER_USER, String(auth.user.id));

    const request = await db
      .insertInto('help_requests')
      .values({
        user_id: auth.user.id,
        organization_id: organization.id,
        service: input.service,
        category: input.category,
        company: input.company,
        name: input.name,
        email: input.emailAddress,
        message: input.message,
      })
      .returning('id')
      .executeTakeFirstOrThrow();

    const values = {
      id: request.id,
      service: input.service,
      category: input.category,
      company: input.company || '-',
      name: input.name,
      email: input.emailAddress,
      account: auth.user.email,
      organization: `${organization.name} (${organization.service_code})`,
      message: input.message,
    };
    await mailer.send(catalogueMail(config.SUPPORT_EMAIL, 'mail.help.subject', 'mail.help.body', values));
    await mailer.send(
      catalogueMail(input.emailAddress, 'mail.helpConfirm.subject', 'mail.helpConfirm.body', values),
    );
    return {};
  },
};
