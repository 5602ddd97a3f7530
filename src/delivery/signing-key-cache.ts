import { SecretBox } from '../partners/secret-box.js';
import { Signer, signerFor } from './callback-signature.js';

/** Prepared signers kept: a process signs for the same few partners' keys over and over. */
const CACHE_LIMIT = 10_000;

/**
 * The signers of partners' stored (sealed) keys, each opened and prepared once (an Ed25519 key
 * object, an HMAC key's bytes) and kept by its sealed value: a key replaced by a rotation or a
 * switch has another sealed value, so nothing kept can go stale. Opening throws for a key sealed
 * with a SECRETS_KEY this process lacks.
 */
export class SigningKeyCache {
  private readonly signers = new Map<string, Signer>();

  constructor(private readonly box: SecretBox) {}

  /** The signers for a partner's current key and, while it is honoured, its previous one. */
  signersOf(sealed: string, previousSealed: string | null): Signer[] {
    return previousSealed === null ? [this.signer(sealed)] : [this.signer(sealed), this.signer(previousSealed)];
  }

  private signer(sealed: string): Signer {
    const known = this.signers.get(sealed);
    if (known) return known;
    const signer = signerFor(this.box.open(sealed, 'partners.signing_secret'));
    if (this.signers.size >= CACHE_LIMIT) this.signers.clear();
    this.signers.set(sealed, signer);
    return signer;
  }
}
