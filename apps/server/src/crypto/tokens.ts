import { createHash, randomBytes } from 'node:crypto';

/**
 * Bearer secrets (sessions, activation and reset links, API tokens): 256 random bits, and the
 * SHA-256 that is all the database keeps of them. Plain SHA-256 suffices: the secrets are
 * random, not passwords, so there is nothing to guess from a leaked digest.
 */
export function randomToken(): string {
  return randomBytes(32).toString('base64url');
}

export function tokenDigest(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}
