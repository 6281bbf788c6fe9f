import { X509Certificate, createPrivateKey, type KeyObject } from 'node:crypto';
import { AppError } from '../http/app-error.ts';

const CERTIFICATE_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;
const ENCRYPTED_KEY = /-----BEGIN ENCRYPTED PRIVATE KEY-----|Proc-Type:\s*4\s*,\s*ENCRYPTED/i;

export interface CheckedCertificate {
  /** SHA-256 of the leaf's DER, colon-separated upper-case hex (as `openssl x509 -fingerprint`). */
  fingerprint: string;
  expiresAt: Date;
  /** The leaf certificate, PEM. */
  certificate: string;
  /** The intermediate certificates, PEM, leaf's issuer first; '' when none. */
  intermediateCertificate: string;
  /** The unencrypted key, PKCS#8 PEM: seal it before storing. */
  privateKey: string;
}

function parseCertificates(pem: string): X509Certificate[] {
  const blocks = pem.match(CERTIFICATE_BLOCK) ?? [];
  try {
    return blocks.map((block) => new X509Certificate(block));
  } catch {
    throw new AppError('certificate unreadable');
  }
}

function parseKey(pem: string): KeyObject {
  try {
    return createPrivateKey({ key: pem, format: 'pem' });
  } catch {
    throw new AppError('certificate unreadable');
  }
}

function validAt(certificate: X509Certificate, now: Date): boolean {
  const from = new Date(certificate.validFrom).getTime();
  const to = new Date(certificate.validTo).getTime();
  return !Number.isNaN(from) && !Number.isNaN(to) && from <= now.getTime() && now.getTime() < to;
}

function issued(child: X509Certificate, parent: X509Certificate): boolean {
  return parent.ca && child.checkIssued(parent) && child.verify(parent.publicKey);
}

/**
 * The certificate checks of console-spec section 8, each with its own refusal, in the order a
 * user fixes them: encrypted key, unreadable PEM, host name, validity period, chain, key match.
 *
 * `certificate` may carry the chain after the leaf (a common "fullchain" file); those blocks
 * count as intermediates before the ones given separately. Without any intermediate the leaf
 * is taken as issued by a root the clients trust: there is no trust store to check it against.
 */
export function checkCertificate(
  input: { certificate: string; intermediateCertificate: string; privateKey: string },
  host: string,
  now: Date,
): CheckedCertificate {
  if (ENCRYPTED_KEY.test(input.privateKey)) throw new AppError('certificate key encrypted');
  const [leaf, ...bundled] = parseCertificates(input.certificate);
  if (!leaf) throw new AppError('certificate unreadable');
  const intermediates = [...bundled, ...parseCertificates(input.intermediateCertificate)];
  if (input.intermediateCertificate.trim() !== '' && intermediates.length === bundled.length)
    throw new AppError('certificate unreadable');
  const key = parseKey(input.privateKey);

  if (leaf.checkHost(host) === undefined)
    throw new AppError('certificate host mismatch', { params: { host } });
  if (!validAt(leaf, now)) throw new AppError('certificate expired');
  let child = leaf;
  for (const parent of intermediates) {
    if (!issued(child, parent) || !validAt(parent, now)) throw new AppError('certificate chain invalid');
    child = parent;
  }
  let matches = false;
  try {
    matches = leaf.checkPrivateKey(key);
  } catch {
    // A key of another type (EC key for an RSA certificate) is a mismatch too.
  }
  if (!matches) throw new AppError('certificate key mismatch');

  return {
    fingerprint: leaf.fingerprint256,
    expiresAt: new Date(leaf.validTo),
    certificate: leaf.toString(),
    intermediateCertificate: intermediates.map((certificate) => certificate.toString()).join(''),
    privateKey: key.export({ format: 'pem', type: 'pkcs8' }).toString(),
  };
}
