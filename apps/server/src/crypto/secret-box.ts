import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

const VERSION = 'v1';

/**
 * Secrets at rest (S3 keys, signing secrets, TLS keys, TOTP seeds): AES-256-GCM with a random
 * nonce, stored as `v1.{nonce}.{ciphertext+tag}` in base64url. Also keys an HMAC for values
 * that are only ever compared (backup codes).
 */
export class SecretBox {
  private constructor(private readonly key: Buffer) {}

  static fromKey(key: Buffer): SecretBox {
    if (key.length !== 32) throw new Error('SECRET_KEY must be 32 bytes (base64)');
    return new SecretBox(key);
  }

  /**
   * SECRET_KEY when set (every process of a fleet must share it); otherwise a key generated once
   * and kept in DATA_DIR/secret.key, which is enough for the single-process default.
   */
  static load(options: { secretKey?: string; dataDir: string }): SecretBox {
    if (options.secretKey) return SecretBox.fromKey(Buffer.from(options.secretKey, 'base64'));
    const path = join(options.dataDir, 'secret.key');
    if (!existsSync(path)) {
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, randomBytes(32).toString('base64'), { mode: 0o600, flag: 'wx' });
    }
    return SecretBox.fromKey(Buffer.from(readFileSync(path, 'utf8').trim(), 'base64'));
  }

  seal(plaintext: string): string {
    const nonce = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, nonce);
    const sealed = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return `${VERSION}.${nonce.toString('base64url')}.${sealed.toString('base64url')}`;
  }

  open(box: string): string {
    const [version, nonce, sealed] = box.split('.');
    if (version !== VERSION || !nonce || !sealed) throw new Error('not a sealed secret');
    const data = Buffer.from(sealed, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(nonce, 'base64url'));
    decipher.setAuthTag(data.subarray(data.length - 16));
    return Buffer.concat([decipher.update(data.subarray(0, data.length - 16)), decipher.final()]).toString(
      'utf8',
    );
  }

  /** A keyed digest: a leaked table of these cannot be brute-forced without the key. */
  digest(value: string): string {
    return createHmac('sha256', this.key).update(value).digest('base64url');
  }

  /**
   * A key of its own for one purpose (HKDF-SHA256), the same in every process sharing the key:
   * what it signs can never pass for a sealed secret or a digest.
   */
  deriveKey(purpose: string): Buffer {
    return Buffer.from(hkdfSync('sha256', this.key, Buffer.alloc(0), `ukiyo ${purpose}`, 32));
  }
}

/**
 * True when the key sealing secrets at rest is the generated DATA_DIR/secret.key and the
 * database is the embedded one in the same directory: a copy of DATA_DIR (a backup, a disk
 * image) then carries both the sealed secrets and the key that opens them.
 */
export function keyBesideDatabase(config: { SECRET_KEY?: string; DATABASE_URL?: string }): boolean {
  return !config.SECRET_KEY && !config.DATABASE_URL;
}
