import { createHmac, KeyObject, sign } from 'node:crypto';
import { ed25519PrivateKey, schemeOfKey } from './signing-keys.js';

/** One signature of the `webhook-signature` list, by one key. */
export interface Signer {
  /** `v1,<base64>` or `v1a,<base64>` of `content`. */
  sign(content: string): string;
}

/** HMAC-SHA256 keyed with the base64 payload of `whsec_…` (Standard Webhooks `v1`). */
class HmacSigner implements Signer {
  private readonly key: Buffer;

  constructor(secret: string) {
    this.key = Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64');
  }

  sign(content: string): string {
    return `v1,${createHmac('sha256', this.key).update(content).digest('base64')}`;
  }
}

/** Ed25519 by a `whsk_…` key (Standard Webhooks `v1a`); the key object is made once, here. */
class Ed25519Signer implements Signer {
  private readonly key: KeyObject;

  constructor(whsk: string) {
    this.key = ed25519PrivateKey(whsk);
  }

  sign(content: string): string {
    return `v1a,${sign(null, Buffer.from(content), this.key).toString('base64')}`;
  }
}

/** The signer of a stored key (opened, never sealed), by its form: `whsk_…` Ed25519, else HMAC. */
export function signerFor(key: string): Signer {
  return schemeOfKey(key) === 'ed25519' ? new Ed25519Signer(key) : new HmacSigner(key);
}

/**
 * Standard Webhooks `webhook-signature`: each key's signature of `{id}.{timestamp}.{body}`,
 * space-separated (two during an overlap, in the order given: the current key first).
 */
export function signatureHeader(signers: Signer[], msgId: string, timestampSec: number, body: string): string {
  const content = `${msgId}.${timestampSec}.${body}`;
  return signers.map((s) => s.sign(content)).join(' ');
}
