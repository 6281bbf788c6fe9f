import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { Permission } from '@ukiyo/contract';
import type { SecretBox } from '../crypto/secret-box.ts';
import type { Db } from '../db/database.ts';
import type { TokenPrincipal } from './api-tokens.ts';

/** Long enough to start publishing from the console, short enough that a leaked one soon dies. */
export const PUBLISH_CREDENTIAL_SECONDS = 10 * 60;

/**
 * The form's version; the dot also keeps a credential from ever decoding as an encoded API
 * token (plain base64), so the live API refuses it as one.
 */
const PREFIX = 'ukp1';

interface Claims {
  /** Random: names the credential for its own WHIP rate budget. */
  i: string;
  /** Organization. */
  o: number;
  /** Channel. */
  c: string;
  /** Expiry, in Unix seconds. */
  e: number;
}

/**
 * Signed, not stored: HMAC-SHA256 under a key derived from SECRET_KEY, so every process of a
 * fleet checks what any of them issued, and nothing is kept to look up or clean away.
 */
function sign(secrets: SecretBox, body: string): Buffer {
  return createHmac('sha256', secrets.deriveKey('publish credential')).update(body).digest();
}

/**
 * A bearer credential for the console's browser publisher: WHIP POST and DELETE of this one
 * channel until it expires, and nothing else (the live API takes API tokens only).
 */
export function issuePublishCredential(
  secrets: SecretBox,
  organizationId: number,
  channelId: string,
  now = Date.now(),
): { credential: string; expiresAt: Date } {
  const expiresAt = new Date((Math.floor(now / 1000) + PUBLISH_CREDENTIAL_SECONDS) * 1000);
  const claims: Claims = {
    i: randomBytes(9).toString('base64url'),
    o: organizationId,
    c: channelId,
    e: expiresAt.getTime() / 1000,
  };
  const body = `${PREFIX}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
  return { credential: `${body}.${sign(secrets, body).toString('base64url')}`, expiresAt };
}

export function isPublishCredential(bearer: string): boolean {
  return bearer.startsWith(`${PREFIX}.`);
}

/** The claims of an untampered, unexpired credential. */
function readClaims(secrets: SecretBox, credential: string, now: number): Claims | undefined {
  if (credential.length > 512) return undefined;
  const [prefix, payload, signature, ...rest] = credential.split('.');
  if (prefix !== PREFIX || !payload || !signature || rest.length > 0) return undefined;
  const expected = sign(secrets, `${prefix}.${payload}`);
  const given = Buffer.from(signature, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Claims;
  return claims.e * 1000 > now ? claims : undefined;
}

export type PublishCheck =
  { principal: TokenPrincipal } | { refused: 'invalid' | 'another channel'; principal?: undefined };

/**
 * Checks a credential for a WHIP call on `channelId`: signature, expiry, channel, and that the
 * channel is still there (its organization's live flag comes along for the live check).
 */
export async function checkPublishCredential(
  db: Db,
  secrets: SecretBox,
  credential: string,
  channelId: string,
  now = Date.now(),
): Promise<PublishCheck> {
  const claims = readClaims(secrets, credential, now);
  if (!claims) return { refused: 'invalid' };
  if (claims.c !== channelId) return { refused: 'another channel' };
  const row = await db
    .selectFrom('channels')
    .innerJoin('organizations', 'organizations.id', 'channels.organization_id')
    .select('organizations.is_live')
    .where('channels.id', '=', claims.c)
    .where('channels.organization_id', '=', claims.o)
    .where('channels.deleted_at', 'is', null)
    .executeTakeFirst();
  if (!row) return { refused: 'invalid' };
  return {
    principal: {
      limitKey: `credential:${claims.i}`,
      organizationId: claims.o,
      isLive: row.is_live,
      permission: Permission.channel,
    },
  };
}
