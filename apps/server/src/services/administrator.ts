import { randomBytes } from 'node:crypto';
import { ALL_PERMISSIONS } from '@ukiyo/contract';
import { hashPassword } from '../auth/passwords.ts';
import type { Config } from '../config.ts';
import type { Db } from '../db/database.ts';
import { countUsers, createUserIfAbsent } from '../db/repositories/users.ts';

export interface BootstrappedAdmin {
  email: string;
  /** Present only when this start generated it: printed once, never stored in clear. */
  generatedPassword?: string;
}

/**
 * The first administrator, created only when the database has no user at all. Undefined unless
 * this call created it: of processes starting together, only the one whose insert won reports
 * (and prints) the password.
 */
export async function bootstrapAdministrator(db: Db, config: Config): Promise<BootstrappedAdmin | undefined> {
  if ((await countUsers(db)) > 0) return undefined;
  const email = config.BOOTSTRAP_ADMIN_EMAIL ?? 'admin@ukiyo.localhost';
  const generatedPassword = config.BOOTSTRAP_ADMIN_PASSWORD
    ? undefined
    : randomBytes(12).toString('base64url');
  const created = await createUserIfAbsent(db, {
    email,
    full_name: 'Administrator',
    password_hash: await hashPassword(config.BOOTSTRAP_ADMIN_PASSWORD ?? generatedPassword!),
    permission: ALL_PERMISSIONS,
    activated_at: new Date(),
    sakura_account_id: null,
  });
  if (created === undefined) return undefined;
  return generatedPassword ? { email, generatedPassword } : { email };
}
