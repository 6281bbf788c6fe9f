import { tokenDigest } from '../crypto/tokens.ts';
import { tokenHasPermission } from '@ukiyo/contract';
import type { Db } from '../db/database.ts';

/** The masked form shown after creation: 12 asterisks and the last 4 characters. */
export function maskToken(last4: string): string {
  return `${'*'.repeat(12)}${last4}`;
}

/** The bearer form customers send: base64 of `{"token": secret}` with the trailing `=` removed. */
export function encodeToken(secret: string): string {
  return Buffer.from(JSON.stringify({ token: secret }))
    .toString('base64')
    .replace(/=+$/, '');
}

export function decodeToken(encoded: string): string | undefined {
  if (encoded.length > 512 || !/^[A-Za-z0-9+/]+$/.test(encoded)) return undefined;
  try {
    const value: unknown = JSON.parse(Buffer.from(encoded, 'base64').toString('utf8'));
    if (typeof value === 'object' && value !== null && 'token' in value && typeof value.token === 'string') {
      return value.token;
    }
  } catch {
    // not JSON: not one of ours
  }
  return undefined;
}

export interface TokenPrincipal {
  /** Names the caller's rate budgets: the token, or a publish credential standing in for one. */
  limitKey: string;
  organizationId: number;
  isLive: boolean;
  permission: number | null;
  /**
   * The API token itself (absent for a publish credential): the audit trail names it, and
   * /api/v1 acts for its creator.
   */
  token?: { id: number; name: string; createdBy: number | null };
}

/** The token secret of an `Authorization: Bearer …` header (the encoded form), if any. */
export function bearerSecret(header: string | undefined): string | undefined {
  const match = /^Bearer\s+(\S+)$/i.exec(header ?? '');
  return match ? decodeToken(match[1]!) : undefined;
}

/** The enabled, undeleted token behind an `Authorization: Bearer …` header, if any. */
export async function resolveBearer(db: Db, header: string | undefined): Promise<TokenPrincipal | undefined> {
  const secret = bearerSecret(header);
  return secret ? findToken(db, tokenDigest(secret)) : undefined;
}

/** The enabled, undeleted token whose secret has `digest`, if any: one indexed read. */
export async function findToken(db: Db, digest: string): Promise<TokenPrincipal | undefined> {
  const row = await db
    .selectFrom('auth_tokens')
    .innerJoin('organizations', 'organizations.id', 'auth_tokens.organization_id')
    .select([
      'auth_tokens.id',
      'auth_tokens.organization_id',
      'auth_tokens.permission',
      'auth_tokens.description',
      'auth_tokens.created_by',
      'organizations.is_live',
    ])
    .where('auth_tokens.token_hash', '=', digest)
    .where('auth_tokens.enabled', '=', true)
    .where('auth_tokens.deleted_at', 'is', null)
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    limitKey: String(row.id),
    organizationId: row.organization_id,
    isLive: row.is_live,
    permission: row.permission,
    token: { id: row.id, name: row.description, createdBy: row.created_by },
  };
}

export function principalHolds(principal: TokenPrincipal, required: number): boolean {
  return tokenHasPermission(principal.permission, required);
}
