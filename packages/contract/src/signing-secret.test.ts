import { describe, expect, it } from 'vitest';
import { generateSigningSecret } from './signing-secret.ts';

describe('generateSigningSecret', () => {
  it('makes 20 letters and digits, different each time', () => {
    const secrets = Array.from({ length: 200 }, generateSigningSecret);
    for (const secret of secrets) expect(secret).toMatch(/^[A-Za-z0-9]{20}$/);
    expect(new Set(secrets).size).toBe(secrets.length);
  });
});
