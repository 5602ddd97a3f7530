// A partner's signing key, in the Standard Webhooks forms: `whsec_<base64 of 32 random bytes>`
// (HMAC-SHA256, signatures `v1,…`) or an Ed25519 key pair (signatures `v1a,…`): the private key
// as `whsk_<base64 of its 32-byte seed>`, which only this service holds (sealed at rest), and the
// public key as `whpk_<base64 of its raw 32 bytes>`, which the partner verifies with.
import { createPrivateKey, createPublicKey, generateKeyPairSync, KeyObject } from 'node:crypto';
import { newSigningSecret } from './tokens.js';

export const SIGNATURE_SCHEMES = ['hmac-sha256', 'ed25519'] as const;
export type SignatureScheme = (typeof SIGNATURE_SCHEMES)[number];
export const DEFAULT_SIGNATURE_SCHEME: SignatureScheme = 'hmac-sha256';

const PRIVATE_PREFIX = 'whsk_';
const PUBLIC_PREFIX = 'whpk_';
/** DER of an Ed25519 PKCS#8 private key up to its 32-byte seed (RFC 8410). */
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
/** DER of an Ed25519 SubjectPublicKeyInfo up to its 32-byte key (RFC 8410). */
const SPKI_ED25519_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/** What the partner is shown of a new key, once: the secret itself, or the public key. */
export type ShownKey = { signingSecret: string } | { signingPublicKey: string };

export interface NewSigningKey {
  scheme: SignatureScheme;
  /** The value to seal and store (`whsec_…` or `whsk_…`). */
  stored: string;
  /** `whpk_…` for an Ed25519 key, null for a secret. */
  publicKey: string | null;
  shown: ShownKey;
}

export function newSigningKey(scheme: SignatureScheme): NewSigningKey {
  if (scheme === 'hmac-sha256') {
    const secret = newSigningSecret();
    return { scheme, stored: secret, publicKey: null, shown: { signingSecret: secret } };
  }
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const seed = privateKey.export({ format: 'der', type: 'pkcs8' }).subarray(PKCS8_ED25519_PREFIX.length);
  const whpk = publicKeyText(publicKey);
  return {
    scheme,
    stored: `${PRIVATE_PREFIX}${seed.toString('base64')}`,
    publicKey: whpk,
    shown: { signingPublicKey: whpk },
  };
}

/** The scheme a stored key signs with, by its form. */
export function schemeOfKey(key: string): SignatureScheme {
  return key.startsWith(PRIVATE_PREFIX) ? 'ed25519' : 'hmac-sha256';
}

/** The private key object of a `whsk_…` key. */
export function ed25519PrivateKey(whsk: string): KeyObject {
  const seed = Buffer.from(whsk.slice(PRIVATE_PREFIX.length), 'base64');
  if (!whsk.startsWith(PRIVATE_PREFIX) || seed.length !== 32)
    throw new Error('not an Ed25519 signing key (whsk_ and a 32-byte seed)');
  return createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, seed]), format: 'der', type: 'pkcs8' });
}

/** `whpk_…` of an Ed25519 public (or private) key: the raw 32 bytes closing its SPKI DER. */
export function publicKeyText(key: KeyObject): string {
  const spki = (key.type === 'public' ? key : createPublicKey(key)).export({ format: 'der', type: 'spki' });
  return `${PUBLIC_PREFIX}${spki.subarray(SPKI_ED25519_PREFIX.length).toString('base64')}`;
}

/** The public key object of a `whpk_…` key, as a receiver builds it to verify `v1a` signatures. */
export function ed25519PublicKey(whpk: string): KeyObject {
  const raw = Buffer.from(whpk.slice(PUBLIC_PREFIX.length), 'base64');
  if (!whpk.startsWith(PUBLIC_PREFIX) || raw.length !== 32)
    throw new Error('not an Ed25519 public key (whpk_ and 32 bytes)');
  return createPublicKey({ key: Buffer.concat([SPKI_ED25519_PREFIX, raw]), format: 'der', type: 'spki' });
}
