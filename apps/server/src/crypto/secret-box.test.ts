import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { keyBesideDatabase, SecretBox } from './secret-box.ts';

describe('SecretBox', () => {
  it('seals and opens, with a fresh nonce each time', () => {
    const box = SecretBox.fromKey(randomBytes(32));
    const a = box.seal('s3cret ✓');
    expect(a).not.toContain('s3cret');
    expect(a).not.toBe(box.seal('s3cret ✓'));
    expect(box.open(a)).toBe('s3cret ✓');
  });

  it('refuses a tampered box or another key', () => {
    const box = SecretBox.fromKey(randomBytes(32));
    const sealed = box.seal('value');
    // A different character in place of the one before last (it was a 1-in-64 no-op before).
    const replaced = sealed.at(-2) === 'A' ? 'B' : 'A';
    const tampered = `${sealed.slice(0, -2)}${replaced}${sealed.slice(-1)}`;
    expect(() => box.open(tampered)).toThrow();
    expect(() => SecretBox.fromKey(randomBytes(32)).open(sealed)).toThrow();
  });

  it('derives the same key for a purpose from the same secret, another for another purpose', () => {
    const secret = randomBytes(32);
    const key = SecretBox.fromKey(secret).deriveKey('publish credential');
    expect(key).toHaveLength(32);
    expect(SecretBox.fromKey(Buffer.from(secret)).deriveKey('publish credential')).toEqual(key);
    expect(SecretBox.fromKey(secret).deriveKey('something else')).not.toEqual(key);
    expect(key).not.toEqual(secret);
  });

  it('keeps a generated key in DATA_DIR across loads', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'secret-'));
    const sealed = SecretBox.load({ dataDir }).seal('kept');
    expect(SecretBox.load({ dataDir }).open(sealed)).toBe('kept');
  });

  it('warns only of a generated key kept beside the embedded database', () => {
    expect(keyBesideDatabase({})).toBe(true);
    expect(keyBesideDatabase({ SECRET_KEY: randomBytes(32).toString('base64') })).toBe(false);
    expect(keyBesideDatabase({ DATABASE_URL: 'postgres://db/ukiyo' })).toBe(false);
  });
});
