import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SecretBox } from '../crypto/secret-box.ts';
import { channelOfStreamKey, channelStreamSecret, streamKeyOf } from './stream-keys.ts';

describe('stream keys', () => {
  const secrets = SecretBox.fromKey(randomBytes(32));
  const channel = 'a'.repeat(32);

  it("names the channel whose key it is, and only that channel's", () => {
    const key = streamKeyOf(secrets, channel);
    expect(key).toBe(`${channel}.${channelStreamSecret(secrets, channel)}`);
    expect(channelOfStreamKey(secrets, key)).toBe(channel);
    const otherChannel = 'b'.repeat(32);
    expect(channelOfStreamKey(secrets, `${otherChannel}.${key.split('.')[1]}`)).toBeUndefined();
  });

  it('refuses a tampered, malformed or foreign key', () => {
    const key = streamKeyOf(secrets, channel);
    const last = key.at(-1) === 'A' ? 'B' : 'A';
    expect(channelOfStreamKey(secrets, key.slice(0, -1) + last)).toBeUndefined();
    expect(channelOfStreamKey(secrets, channel)).toBeUndefined();
    expect(channelOfStreamKey(secrets, `${key}x`)).toBeUndefined();
    expect(channelOfStreamKey(secrets, `../${key}`)).toBeUndefined();
    expect(channelOfStreamKey(SecretBox.fromKey(randomBytes(32)), key)).toBeUndefined();
  });
});
