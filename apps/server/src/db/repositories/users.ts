import { isAdministrator } from '@ukiyo/contract';
import { sql } from 'kysely';
import type { Db } from '../database.ts';
import type { NewUser, SakuraAccountRow, UserRow } from '../tables.ts';
import type { Scope } from './scope.ts';

export function findUserByEmail(db: Db, email: string): Promise<UserRow | undefined> {
  return db
    .selectFrom('users')
    .selectAll()
    .where(sql<string>`lower(email)`, '=', email.toLowerCase())
    .executeTakeFirst();
}

export function findUserById(db: Db, id: number): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The account a user belongs to; null for administrators, who belong to none. */
export async function accountOf(db: Db, user: UserRow): Promise<SakuraAccountRow | null> {
  if (user.sakura_account_id === null) return null;
  return (
    (await db
      .selectFrom('sakura_accounts')
      .selectAll()
      .where('id', '=', user.sakura_account_id)
      .executeTakeFirst()) ?? null
  );
}

export async function userRestrictions(db: Db, userId: number): Promise<number[]> {
  const rows = await db
    .selectFrom('user_restrictions')
    .select('organization_id')
    .where('user_id', '=', userId)
    .orderBy('organization_id')
    .execute();
  return rows.map((row) => row.organization_id);
}

export async function setUserRestrictions(
  db: Db,
  userId: number,
  organizationIds: readonly number[],
): Promise<void> {
  await db.deleteFrom('user_restrictions').where('user_id', '=', userId).execute();
  if (organizationIds.length === 0) return;
  await db
    .insertInto('user_restrictions')
    .values(organizationIds.map((organizationId) => ({ user_id: userId, organization_id: organizationId })))
    .execute();
}

export async function createUser(db: Db, values: NewUser): Promise<number> {
  const row = await db.insertInto('users').values(values).returning('id').executeTakeFirstOrThrow();
  return row.id;
}

/**
 * Creates a user unless one with that e-mail address exists (a concurrent insert included):
 * the new id, or undefined when nothing was created.
 */
export async function createUserIfAbsent(db: Db, values: NewUser): Promise<number | undefined> {
  const row = await db
    .insertInto('users')
    .values(values)
    .onConflict((conflict) => conflict.doNothing())
    .returning('id')
    .executeTakeFirst();
  return row?.id;
}

export async function countUsers(db: Db): Promise<number> {
  const row = await db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

export async function rememberOrganization(db: Db, userId: number, organizationId: number): Promise<void> {
  await db
    .updateTable('users')
    .set({ last_organization_id: organizationId })
    .where('id', '=', userId)
    .execute();
}

export function scopeOf(user: UserRow, restrictedTo: readonly number[]): Scope {
  return {
    userId: user.id,
    isAdmin: isAdministrator(user.permission),
    accountId: user.sakura_account_id,
    restrictedTo,
  };
}

/**
 * Users of an account who reach an organization: unrestricted ones and those whose restriction
 * lists it.
 */
export function usersReaching(db: Db, accountId: number, organizationId: number) {
  return db
    .selectFrom('users')
    .selectAll('users')
    .where('users.sakura_account_id', '=', accountId)
    .where((eb) =>
      eb.or([
        eb.not(
          eb.exists(
            eb.selectFrom('user_restrictions').select('user_id').whereRef('user_id', '=', 'users.id'),
          ),
        ),
        eb.exists(
          eb
            .selectFrom('user_restrictions')
            .select('user_id')
            .whereRef('user_id', '=', 'users.id')
            .where('organization_id', '=', organizationId),
        ),
      ]),
    );
}

export function findAccountUserByEmail(
  db: Db,
  accountId: number,
  email: string,
): Promise<UserRow | undefined> {
  return db
    .selectFrom('users')
    .selectAll()
    .where(sql<string>`lower(email)`, '=', email.toLowerCase())
    .where('sakura_account_id', '=', accountId)
    .executeTakeFirst();
}

export async function restrictionsOf(db: Db, userIds: readonly number[]): Promise<Map<number, number[]>> {
  const map = new Map<number, number[]>(userIds.map((id) => [id, []]));
  if (userIds.length === 0) return map;
  const rows = await db
    .selectFrom('user_restrictions')
    .select(['user_id', 'organization_id'])
    .where('user_id', 'in', userIds)
    .orderBy('organization_id')
    .execute();
  for (const row of rows) map.get(row.user_id)?.push(row.organization_id);
  return map;
}
