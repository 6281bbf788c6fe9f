import { randomBytes } from 'node:crypto';
import type { SecretBox } from '../crypto/secret-box.ts';
import type { Db } from '../db/database.ts';

/** A Standard Webhooks secret: `whsec_` and the base64 of 32 random bytes (the HMAC key). */
function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** Replaces the organization's webhook signing secret; the answer is the only copy shown. */
export async function rotateWebhookSecret(
  db: Db,
  secrets: SecretBox,
  organizationId: number,
): Promise<{ secret: string; createdAt: Date }> {
  const secret = newSecret();
  const row = await db
    .updateTable('organizations')
    .set({ webhook_secret_enc: secrets.seal(secret), webhook_secret_created_at: new Date() })
    .where('id', '=', organizationId)
    .returning('webhook_secret_created_at')
    .executeTakeFirstOrThrow();
  return { secret, createdAt: row.webhook_secret_created_at! };
}

/**
 * The secret an organization's webhooks are signed with. Every webhook is signed: one sent
 * before the organization asked for a secret gets one made now (its members rotate it to see
 * it); of two processes making it at once, the first write wins and both sign with it.
 */
export async function webhookSecret(db: Db, secrets: SecretBox, organizationId: number): Promise<string> {
  const stored = async () =>
    (
      await db
        .selectFrom('organizations')
        .select('webhook_secret_enc')
        .where('id', '=', organizationId)
        .executeTakeFirstOrThrow()
    ).webhook_secret_enc;
  const sealed = await stored();
  if (sealed) return secrets.open(sealed);
  await db
    .updateTable('organizations')
    .set({ webhook_secret_enc: secrets.seal(newSecret()), webhook_secret_created_at: new Date() })
    .where('id', '=', organizationId)
    .where('webhook_secret_enc', 'is', null)
    .execute();
  return secrets.open((await stored())!);
}

/** When the organization's current secret was made; null before its first webhook or rotation. */
export async function webhookSecretCreatedAt(db: Db, organizationId: number): Promise<Date | null> {
  const row = await db
    .selectFrom('organizations')
    .select('webhook_secret_created_at')
    .where('id', '=', organizationId)
    .executeTakeFirstOrThrow();
  return row.webhook_secret_created_at;
}
