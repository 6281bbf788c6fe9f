import { createHmac, timingSafeEqual } from 'node:crypto';
import type { SecretBox } from '../crypto/secret-box.ts';

/**
 * A channel's secret for publishers that cannot send a bearer token (RTMP, SRT): 32 base64url
 * characters, derived (HMAC-SHA256 under a key derived from SECRET_KEY) rather than stored, so
 * every live process checks it and existing channels have one. It ends with its channel: a
 * leaked one is revoked by deleting the channel (channels are never reused).
 */
export function channelStreamSecret(secrets: SecretBox, channelId: string): string {
  return createHmac('sha256', secrets.deriveKey('stream key'))
    .update(channelId)
    .digest()
    .subarray(0, 24)
    .toString('base64url');
}

/** The RTMP stream key: the channel, then its secret (`{channel_id}.{secret}`). */
export function streamKeyOf(secrets: SecretBox, channelId: string): string {
  return `${channelId}.${channelStreamSecret(secrets, channelId)}`;
}

const STREAM_KEY = /^([0-9a-f]{1,64})\.([A-Za-z0-9_-]{32})$/;

/** The channel a stream key names, when the key is that channel's; else undefined. */
export function channelOfStreamKey(secrets: SecretBox, key: string): string | undefined {
  const match = STREAM_KEY.exec(key);
  if (!match) return undefined;
  const [, channelId = '', secret = ''] = match;
  const expected = Buffer.from(channelStreamSecret(secrets, channelId));
  const given = Buffer.from(secret);
  return given.length === expected.length && timingSafeEqual(given, expected) ? channelId : undefined;
}
