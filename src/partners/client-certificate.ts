// A partner's client certificate for mutual TLS, checked on upload with node:crypto alone: what
// would make every https callback's handshake fail is refused then (422, naming which), not
// discovered by the partner's missing callbacks.
import { createPrivateKey, KeyObject, X509Certificate } from 'node:crypto';
import { DomainError, ErrorCode, pemBlocks } from '../platform/index.js';

export interface ClientCertificateUpload {
  /** PEM: the leaf first, then its chain. */
  certificate: string;
  privateKey: string;
  /** PEM bundle: the CAs the receiver's certificate is verified against instead of the public roots. */
  serverCa?: string;
}

/** What the partner and operators see of a certificate: never the key. */
export interface ClientCertificateInfo {
  subject: string;
  issuer: string;
  notAfter: Date;
  fingerprint256: string;
}

export interface CheckedClientCertificate {
  /** The certificates as PEM, leaf first, one after the other (what was around them dropped). */
  certificate: string;
  /** The key as unencrypted PKCS#8 PEM, whatever PEM form it came in: to be sealed. */
  privateKey: string;
  serverCa: string | null;
  info: ClientCertificateInfo;
}

/** The extended key usages that allow a certificate to authenticate a TLS client. */
const CLIENT_AUTH = ['1.3.6.1.5.5.7.3.2', '2.5.29.37.0'];

const refuse = (code: (typeof ErrorCode)[keyof typeof ErrorCode], message: string) =>
  new DomainError('rule', code, message);

/** Every certificate of a PEM text, in order; null when there is none or anything else is there. */
function certificates(pem: string): X509Certificate[] | null {
  const blocks = pemBlocks(pem);
  if (!blocks || blocks.some((b) => b.label !== 'CERTIFICATE')) return null;
  try {
    return blocks.map((b) => new X509Certificate(b.text));
  } catch {
    return null;
  }
}

/** openssl's `ecparam -genkey` writes the curve's block before an EC key: allowed, not used. */
const KEY_LABELS = /^(?:(EC PARAMETERS),)?((?:RSA |EC )?PRIVATE KEY)$/;

/** The one private key of a PEM text; null when there is not exactly one, or anything else is there. */
function privateKey(pem: string): KeyObject | null {
  const blocks = pemBlocks(pem);
  if (!blocks || !KEY_LABELS.test(blocks.map((b) => b.label).join(','))) return null;
  try {
    return createPrivateKey(blocks[blocks.length - 1].text);
  } catch {
    return null;
  }
}

/** `C=DE, O=Acme Bank, CN=…`: Node's one attribute per line, as the certificate lists them. */
const distinguishedName = (name: string) => name.split('\n').join(', ');

export function certificateInfo(leaf: X509Certificate): ClientCertificateInfo {
  return {
    subject: distinguishedName(leaf.subject),
    issuer: distinguishedName(leaf.issuer),
    notAfter: new Date(leaf.validTo),
    fingerprint256: leaf.fingerprint256,
  };
}

/**
 * Checks an upload at `now`: readable PEM (certificate, key, serverCa), the key matching the
 * leaf, every certificate of the chain valid now, and the leaf allowed to authenticate a client
 * (when it restricts its use at all). Throws a 422 naming the first problem, never a key.
 */
export function checkClientCertificate(upload: ClientCertificateUpload, now: Date): CheckedClientCertificate {
  const chain = certificates(upload.certificate);
  if (!chain)
    throw refuse(
      ErrorCode.client_certificate_unreadable,
      'certificate is not readable PEM: give the leaf certificate first, then its chain, ' +
        'each as -----BEGIN CERTIFICATE-----, nothing but whitespace around them',
    );
  const key = privateKey(upload.privateKey);
  if (!key)
    throw refuse(
      ErrorCode.client_certificate_unreadable,
      'privateKey is not a readable PEM private key: one key block, nothing but whitespace around it ' +
        '(an encrypted key must be decrypted first)',
    );
  const serverCa = upload.serverCa === undefined ? null : certificates(upload.serverCa);
  if (serverCa === null && upload.serverCa !== undefined)
    throw refuse(
      ErrorCode.client_certificate_unreadable,
      'serverCa is not readable PEM: one or more -----BEGIN CERTIFICATE----- blocks, ' +
        'nothing but whitespace around them',
    );
  const [leaf] = chain;
  if (!leaf.checkPrivateKey(key))
    throw refuse(
      ErrorCode.client_certificate_key_mismatch,
      'privateKey does not match the certificate (its first, leaf, certificate)',
    );
  for (const [i, cert] of chain.entries()) {
    const which = i === 0 ? 'certificate' : `certificate chain (${distinguishedName(cert.subject)})`;
    if (new Date(cert.validTo) <= now)
      throw refuse(ErrorCode.client_certificate_expired, `${which} expired at ${new Date(cert.validTo).toISOString()}`);
    if (new Date(cert.validFrom) > now)
      throw refuse(
        ErrorCode.client_certificate_not_yet_valid,
        `${which} is not valid before ${new Date(cert.validFrom).toISOString()}`,
      );
  }
  // X509Certificate.keyUsage lists the extended key usages; undefined: the certificate sets none (any use).
  const usages = leaf.keyUsage;
  if (usages !== undefined && !usages.some((u) => CLIENT_AUTH.includes(u))) {
    throw refuse(
      ErrorCode.client_certificate_not_for_clients,
      'certificate does not allow client authentication (its extended key usage lacks clientAuth)',
    );
  }
  return {
    certificate: chain.map((c) => c.toString().trim()).join('\n'),
    privateKey: key.export({ type: 'pkcs8', format: 'pem' }).toString(),
    serverCa: serverCa ? serverCa.map((c) => c.toString().trim()).join('\n') : null,
    info: certificateInfo(leaf),
  };
}
