import type { Selectable } from 'kysely';
import type { StatusEventTable } from '../db/tables.ts';
import { AppError, invalid } from '../http/app-error.ts';
import type { Handlers } from './context.ts';

/** How far back the public status list reaches (console-spec section 9). */
export const STATUS_MONTHS = 3;

/** The start of the status window: the same instant STATUS_MONTHS calendar months ago (UTC). */
export function statusWindowStart(now: Date): Date {
  const start = new Date(now.getTime());
  start.setUTCMonth(start.getUTCMonth() - STATUS_MONTHS);
  return start;
}

function presentEvent(row: Selectable<StatusEventTable>) {
  return {
    statusEventID: row.id,
    kind: row.kind as 'incident' | 'maintenance',
    title: row.title,
    body: row.body,
    state: row.state as 'scheduled' | 'in_progress' | 'resolved',
    startsAt: row.starts_at.toISOString(),
    endsAt: row.ends_at ? row.ends_at.toISOString() : null,
  };
}

export const statusHandlers: Handlers = {
  'status.list': async (_input, context) => {
    const since = statusWindowStart(new Date());
    // An event counts while any part of it lies in the window: scheduled maintenance ahead,
    // and an old incident still open or only just resolved.
    const rows = await context.deps.db
      .selectFrom('status_events')
      .selectAll()
      .where((eb) =>
        eb.or([eb('starts_at', '>=', since), eb('ends_at', '>=', since), eb('state', '!=', 'resolved')]),
      )
      .orderBy('starts_at', 'desc')
      .orderBy('id', 'desc')
      .execute();
    return { events: rows.map(presentEvent), externalUrl: context.deps.config.STATUS_URL ?? null };
  },

  'admin.status_save': async (input, context) => {
    const startsAt = new Date(input.startsAt);
    const endsAt = input.endsAt === null ? null : new Date(input.endsAt);
    if (endsAt && endsAt.getTime() < startsAt.getTime()) throw invalid('endsAt', 'validation.invalid');
    const values = {
      kind: input.kind,
      title: input.title,
      body: input.body,
      state: input.state,
      starts_at: startsAt,
      ends_at: endsAt,
    };
    const { db } = context.deps;
    const row =
      input.statusEventID < 0
        ? await db.insertInto('status_events').values(values).returningAll().executeTakeFirstOrThrow()
        : await db
            .updateTable('status_events')
            .set(values)
            .where('id', '=', input.statusEventID)
            .returningAll()
            .executeTakeFirst();
    if (!row) throw new AppError('not found');
    return { event: presentEvent(row) };
  },

  'admin.status_delete': async ({ statusEventID }, context) => {
    const deleted = await context.deps.db
      .deleteFrom('status_events')
      .where('id', '=', statusEventID)
      .executeTakeFirst();
    if (deleted.numDeletedRows === 0n) throw new AppError('not found');
    return {};
  },
};
