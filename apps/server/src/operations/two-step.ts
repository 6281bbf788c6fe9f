import { randomInt } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import QRCode from 'qrcode';
import { verifyPassword } from '../auth/passwords.ts';
import type { AuthContext } from '../auth/session-store.ts';
import type { Db } from '../db/database.ts';
import { findUserById } from '../db/repositories/users.ts';
import type { UserRow } from '../db/tables.ts';
import { AppError } from '../http/app-error.ts';
import { readOutbox } from '../mail/mailer.ts';
import { authOf, type Handlers, type ServerDeps } from './context.ts';
import { LOGIN_PER_ACCOUNT_AND_ADDRESS, presentSession } from './auth.ts';

const BACKUP_CODE_COUNT = 10;
const BACKUP_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';

function totpFor(user: UserRow, secret: string): TOTP {
  return new TOTP({
    issuer: 'Ukiyo',
    label: user.email,
    algorithm: 'SHA1',
    digits: 6,
    period: 30,
    secret: Secret.fromBase32(secret),
  });
}

/** Backup codes look like `k3m9p-x2qrt`; the table keeps only a keyed digest of each. */
function newBackupCode(): string {
  const pick = () =>
    Array.from({ length: 5 }, () => BACKUP_ALPHABET[randomInt(BACKUP_ALPHABET.length)]).join('');
  return `${pick()}-${pick()}`;
}

const normaliseBackupCode = (code: string) => code.toLowerCase().replace(/[^a-z0-9]/g, '');

async function replaceBackupCodes(deps: ServerDeps, db: Db, userId: number): Promise<string[]> {
  const codes = Array.from({ length: BACKUP_CODE_COUNT }, newBackupCode);
  await db.deleteFrom('totp_backup_codes').where('user_id', '=', userId).execute();
  await db
    .insertInto('totp_backup_codes')
    .values(
      codes.map((code) => ({ user_id: userId, code_hash: deps.secrets.digest(normaliseBackupCode(code)) })),
    )
    .execute();
  return codes;
}

async function requirePassword(auth: AuthContext, password: string) {
  if (!(await verifyPassword(auth.user.password_hash, password))) throw new AppError('password is incorrect');
}

/**
 * A code of the secret for the current time step or a neighbouring one (clock drift), accepted
 * once: its step must be later than the last accepted one, recorded in the same statement.
 */
async function acceptsTotpCode(db: Db, user: UserRow, secret: string, code: string): Promise<boolean> {
  const totp = totpFor(user, secret);
  // One clock reading for both, so a step boundary between them cannot shift the step.
  const timestamp = Date.now();
  const delta = totp.validate({ token: code, window: 1, timestamp });
  if (delta === null) return false;
  const step = totp.counter({ timestamp }) + delta;
  const spent = await db
    .updateTable('users')
    .set({ totp_last_step: step })
    .where('id', '=', user.id)
    .where((eb) => eb.or([eb('totp_last_step', 'is', null), eb('totp_last_step', '<', step)]))
    .executeTakeFirst();
  return Number(spent.numUpdatedRows) === 1;
}

/** A TOTP code of the enrolled secret, or one unused backup code (then spent). */
async function acceptsSecondFactor(deps: ServerDeps, user: UserRow, code: string): Promise<boolean> {
  if (!user.totp_secret_enc || !user.totp_enabled_at) return false;
  if (/^\d{6}$/.test(code))
    return acceptsTotpCode(deps.db, user, deps.secrets.open(user.totp_secret_enc), code);
  const spent = await deps.db
    .updateTable('totp_backup_codes')
    .set({ used_at: new Date() })
    .where('user_id', '=', user.id)
    .where('code_hash', '=', deps.secrets.digest(normaliseBackupCode(code)))
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return Number(spent.numUpdatedRows) === 1;
}

export const twoStepHandlers: Handlers = {
  'auth.verify_totp': async ({ code }, context) => {
    const auth = context.auth;
    if (!auth?.secondFactorPending) throw new AppError('session is invalid');
    const { limits, sessions } = context.deps;
    // Wrong codes count per user and address, as wrong passwords do: guesses from elsewhere
    // never lock the user out of their own second step.
    const guess = await limits
      .guesses('second-step', LOGIN_PER_ACCOUNT_AND_ADDRESS)
      .begin(`${auth.user.id} ${context.request.ip}`);
    if (!(await acceptsSecondFactor(context.deps, auth.user, code))) {
      await guess.failed();
      throw new AppError('invalid verification code');
    }
    await guess.succeeded();
    await sessions.completeSecondFactor(auth);
    return presentSession({ ...auth, secondFactorPending: false });
  },

  'user.totp_begin': async (_input, context) => {
    const auth = authOf(context);
    const secret = new Secret({ size: 20 }).base32;
    // Kept (sealed) but not in force until a code confirms it: enrolment can be restarted.
    await context.deps.db
      .updateTable('users')
      .set({ totp_secret_enc: context.deps.secrets.seal(secret), totp_enabled_at: null })
      .where('id', '=', auth.user.id)
      .execute();
    await context.deps.sessions.invalidate({ userId: auth.user.id });
    const otpauthUri = totpFor(auth.user, secret).toString();
    return {
      otpauthUri,
      qrCodeDataUrl: await QRCode.toDataURL(otpauthUri, { margin: 1, width: 220 }),
      secret,
    };
  },

  'user.totp_enable': async ({ code }, context) => {
    const auth = authOf(context);
    const { db, secrets, sessions } = context.deps;
    const user = (await findUserById(db, auth.user.id))!;
    if (!user.totp_secret_enc) throw new AppError('invalid verification code');
    if (!(await acceptsTotpCode(db, user, secrets.open(user.totp_secret_enc), code))) {
      throw new AppError('invalid verification code');
    }
    const backupCodes = await db.transaction().execute(async (trx) => {
      await trx.updateTable('users').set({ totp_enabled_at: new Date() }).where('id', '=', user.id).execute();
      return replaceBackupCodes(context.deps, trx, user.id);
    });
    await sessions.invalidate({ userId: user.id });
    return { backupCodes };
  },

  'user.totp_disable': async ({ password }, context) => {
    const auth = authOf(context);
    await requirePassword(auth, password);
    await context.deps.db.transaction().execute(async (trx) => {
      await trx
        .updateTable('users')
        .set({ totp_secret_enc: null, totp_enabled_at: null })
        .where('id', '=', auth.user.id)
        .execute();
      await trx.deleteFrom('totp_backup_codes').where('user_id', '=', auth.user.id).execute();
    });
    await context.deps.sessions.invalidate({ userId: auth.user.id });
    return {};
  },

  'user.regenerate_backup_codes': async ({ password }, context) => {
    const auth = authOf(context);
    await requirePassword(auth, password);
    if (!auth.user.totp_enabled_at) throw new AppError('invalid verification code');
    return { backupCodes: await replaceBackupCodes(context.deps, context.deps.db, auth.user.id) };
  },

  'admin.outbox_list': async (_input, context) => {
    const rows = await readOutbox(context.deps.db, 200);
    return {
      mails: rows.map((row) => ({
        mailID: row.id,
        to: row.recipient,
        subject: row.subject,
        body: row.body,
        createdAt: row.created_at.toISOString(),
      })),
    };
  },
};
