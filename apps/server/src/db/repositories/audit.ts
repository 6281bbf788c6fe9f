import type { Db } from '../database.ts';

export type AuditKind = 'login' | 'logout' | 'login_failed';

export async function recordAudit(
  db: Db,
  event: { kind: AuditKind; email: string; ip: string; userId: number | null; organizationId: number | null },
): Promise<void> {
  await db
    .insertInto('audit_events')
    .values({
      kind: event.kind,
      email: event.email,
      ip: event.ip,
      user_id: event.userId,
      organization_id: event.organizationId,
    })
    .execute();
}
