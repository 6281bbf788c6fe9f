const SIGNING_SECRET_LENGTH = 20;
const SECRET_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/**
 * An origin's new signing secret, made alike by the console's "generate" button and the API's
 * rotation: 20 random letters and digits, printable ASCII that needs no escaping in anyone's code.
 */
export function generateSigningSecret(): string {
  const out: string[] = [];
  const bytes = new Uint8Array(64);
  while (out.length < SIGNING_SECRET_LENGTH) {
    crypto.getRandomValues(bytes);
    for (const byte of bytes) {
      // Rejection sampling keeps every character equally likely.
      if (byte < 248 && out.length < SIGNING_SECRET_LENGTH) out.push(SECRET_ALPHABET[byte % 62]!);
    }
  }
  return out.join('');
}
