import { randomBytes } from 'node:crypto';
import { ALL_PERMISSIONS } from '@ukiyo/contract';
import { hashPassword } from '../auth/passwords.ts';
import type { Config } from '../config.ts';
import type { Db } from '../db/database.ts';
import { createOrganization, createSakuraAccount } from '../db/repositories/organizations.ts';
import { countUsers, createUser } from '../db/repositories/users.ts';

export interface BootstrappedAdmin {
  email: string;
  /** Present only when this start generated it: printed once, never stored in clear. */
  generatedPassword?: string;
}

/** The first administrator, created only when the database has no user at all. */
export async function bootstrapAdministrator(db: Db, config: Config): Promise<BootstrappedAdmin | undefined> {
  if ((await countUsers(db)) > 0) return undefined;
  const email = config.BOOTSTRAP_ADMIN_EMAIL ?? 'admin@ukiyo.localhost';
  const generatedPassword = config.BOOTSTRAP_ADMIN_PASSWORD
    ? undefined
    : randomBytes(12).toString('base64url');
  await createUser(db, {
    email,
    full_name: 'Administrator',
    password_hash: await hashPassword(config.BOOTSTRAP_ADMIN_PASSWORD ?? generatedPassword!),
    permission: ALL_PERMISSIONS,
    activated_at: new Date(),
    sakura_account_id: null,
  });
  return generatedPassword ? { email, generatedPassword } : { email };
}

export const DEMO_SERVICE_CODE = 'demo-image';

/** A demo image organization (DEMO=1), so a new installation shows a populated console. */
export async function ensureDemoOrganization(db: Db): Promise<void> {
  const existing = await db
    .selectFrom('organizations')
    .select('id')
    .where('service_code', '=', DEMO_SERVICE_CODE)
    .executeTakeFirst();
  if (existing) return;
  await db.transaction().execute(async (trx) => {
    const accountId = await createSakuraAccount(trx, { memberCode: 'DEMO0001', name: 'Ukiyo Demo' });
    await createOrganization(trx, {
      accountId,
      name: 'Demo images',
      serviceCode: DEMO_SERVICE_CODE,
      plan: 4,
      description: 'Sample organization created by DEMO=1',
    });
  });
}
