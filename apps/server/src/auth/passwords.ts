import { hash, verify } from '@node-rs/argon2';

// OWASP's argon2id baseline (19 MiB, 2 passes, 1 lane): ~20 ms here, fine for logins.
// `algorithm: 2` is Argon2id (the package's const enum cannot be imported under isolatedModules).
const OPTIONS = { algorithm: 2, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export function hashPassword(password: string): Promise<string> {
  return hash(password, OPTIONS);
}

export async function verifyPassword(passwordHash: string, password: string): Promise<boolean> {
  try {
    return await verify(passwordHash, password);
  } catch {
    return false;
  }
}

let timingDummy: Promise<string> | undefined;

/**
 * Spends the time of one verification when there is no user to verify against, so a wrong
 * e-mail address answers as slowly as a wrong password and reveals nothing.
 */
export async function spendVerificationTime(password: string): Promise<void> {
  timingDummy ??= hashPassword('timing-equaliser');
  await verifyPassword(await timingDummy, password);
}
